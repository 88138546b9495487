package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MySqlFairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
