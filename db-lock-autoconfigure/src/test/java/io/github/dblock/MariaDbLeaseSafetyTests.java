package io.github.dblock;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLeaseSafetyTests extends LeaseSafetyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
