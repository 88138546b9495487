package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
