package io.github.dblock;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLeaseSafetyTests extends LeaseSafetyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
