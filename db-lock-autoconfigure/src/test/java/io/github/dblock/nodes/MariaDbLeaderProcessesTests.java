package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLeaderProcessesTests extends LeaderProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
