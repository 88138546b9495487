package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbSeparateProcessesTests extends SeparateProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
