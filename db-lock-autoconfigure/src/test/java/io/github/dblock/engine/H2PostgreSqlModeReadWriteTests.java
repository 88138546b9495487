package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2PostgreSqlModeReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2_POSTGRESQL_MODE;
	}

}
