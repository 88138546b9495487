package io.github.dblock;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLeaseSafetyTests extends LeaseSafetyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
