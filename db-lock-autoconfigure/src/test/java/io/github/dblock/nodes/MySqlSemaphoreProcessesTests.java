package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlSemaphoreProcessesTests extends SemaphoreProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
