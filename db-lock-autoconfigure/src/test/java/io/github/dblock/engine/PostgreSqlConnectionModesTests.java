package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
