package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlFairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
