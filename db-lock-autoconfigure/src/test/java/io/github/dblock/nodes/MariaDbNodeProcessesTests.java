package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbNodeProcessesTests extends NodeProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
