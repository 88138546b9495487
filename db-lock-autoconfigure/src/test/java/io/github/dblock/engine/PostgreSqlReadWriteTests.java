package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
