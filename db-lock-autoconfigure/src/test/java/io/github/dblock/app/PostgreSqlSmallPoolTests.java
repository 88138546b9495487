package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlSmallPoolTests extends SmallPoolContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
