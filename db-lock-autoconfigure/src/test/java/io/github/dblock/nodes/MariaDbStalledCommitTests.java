package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbStalledCommitTests extends StalledCommitContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
