package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
