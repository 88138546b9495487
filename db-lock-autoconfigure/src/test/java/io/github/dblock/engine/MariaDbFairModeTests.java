package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbFairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
