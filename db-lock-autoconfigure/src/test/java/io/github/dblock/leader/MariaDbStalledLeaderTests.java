package io.github.dblock.leader;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbStalledLeaderTests extends StalledLeaderContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
