package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlConnectionModesProcessesTests extends ConnectionModesProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
