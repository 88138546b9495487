package io.github.dblock.leader;

import io.github.dblock.testsupport.TestDatabase;

class MySqlStalledLeaderTests extends StalledLeaderContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
