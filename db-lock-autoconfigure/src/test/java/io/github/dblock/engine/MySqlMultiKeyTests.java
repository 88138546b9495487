package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlMultiKeyTests extends MultiKeyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
