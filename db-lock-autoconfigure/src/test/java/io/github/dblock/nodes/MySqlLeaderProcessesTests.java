package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLeaderProcessesTests extends LeaderProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
