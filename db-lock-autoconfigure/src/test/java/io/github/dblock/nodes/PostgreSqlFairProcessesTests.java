package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlFairProcessesTests extends FairProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
