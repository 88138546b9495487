package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
