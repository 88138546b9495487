package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class MySqlDbLockApplicationTests extends DbLockApplicationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
