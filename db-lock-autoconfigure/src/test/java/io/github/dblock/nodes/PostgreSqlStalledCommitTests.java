package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlStalledCommitTests extends StalledCommitContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
