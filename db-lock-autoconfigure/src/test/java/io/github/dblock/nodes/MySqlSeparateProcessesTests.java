package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlSeparateProcessesTests extends SeparateProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
