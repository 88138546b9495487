package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
