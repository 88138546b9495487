package io.github.dblock.integration;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbDbLockRegistryTests extends DbLockRegistryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
