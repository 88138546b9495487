package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
