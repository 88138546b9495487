package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
