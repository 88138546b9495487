package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbMultiKeyTests extends MultiKeyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
