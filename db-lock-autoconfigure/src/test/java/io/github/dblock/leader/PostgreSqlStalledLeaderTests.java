package io.github.dblock.leader;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlStalledLeaderTests extends StalledLeaderContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
