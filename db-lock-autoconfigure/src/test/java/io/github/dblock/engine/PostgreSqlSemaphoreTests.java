package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlSemaphoreTests extends SemaphoreContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
