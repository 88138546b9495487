package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
