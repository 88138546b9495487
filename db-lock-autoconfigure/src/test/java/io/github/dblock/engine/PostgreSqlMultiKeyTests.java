package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlMultiKeyTests extends MultiKeyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
