package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlSeparateProcessesTests extends SeparateProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
