package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlNodeProcessesTests extends NodeProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
