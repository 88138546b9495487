package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbConnectionModesProcessesTests extends ConnectionModesProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
