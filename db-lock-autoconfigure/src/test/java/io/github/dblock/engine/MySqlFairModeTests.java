package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlFairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
