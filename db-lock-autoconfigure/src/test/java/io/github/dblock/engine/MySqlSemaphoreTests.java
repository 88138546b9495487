package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlSemaphoreTests extends SemaphoreContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
