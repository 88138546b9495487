package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
