package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
