package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
