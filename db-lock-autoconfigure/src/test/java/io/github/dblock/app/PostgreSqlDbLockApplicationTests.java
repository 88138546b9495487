package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlDbLockApplicationTests extends DbLockApplicationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
