package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbSemaphoreTests extends SemaphoreContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
