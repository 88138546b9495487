package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
