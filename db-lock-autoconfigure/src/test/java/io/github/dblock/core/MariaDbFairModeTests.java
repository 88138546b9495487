package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbFairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
