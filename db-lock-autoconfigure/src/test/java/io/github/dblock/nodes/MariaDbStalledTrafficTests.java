package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbStalledTrafficTests extends StalledTrafficContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
