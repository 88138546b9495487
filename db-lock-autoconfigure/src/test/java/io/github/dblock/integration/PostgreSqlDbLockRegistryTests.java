package io.github.dblock.integration;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlDbLockRegistryTests extends DbLockRegistryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
