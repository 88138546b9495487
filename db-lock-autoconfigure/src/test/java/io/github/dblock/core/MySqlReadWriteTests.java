package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MySqlReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
