package io.github.dblock.integration;

import io.github.dblock.testsupport.TestDatabase;

class MySqlDbLockRegistryTests extends DbLockRegistryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
