package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbFairProcessesTests extends FairProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
