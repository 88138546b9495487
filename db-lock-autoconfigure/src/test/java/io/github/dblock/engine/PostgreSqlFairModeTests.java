package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlFairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
