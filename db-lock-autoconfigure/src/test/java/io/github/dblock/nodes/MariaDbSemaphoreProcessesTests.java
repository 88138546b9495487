package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbSemaphoreProcessesTests extends SemaphoreProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
