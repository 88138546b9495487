package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbDbLockApplicationTests extends DbLockApplicationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
