package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
