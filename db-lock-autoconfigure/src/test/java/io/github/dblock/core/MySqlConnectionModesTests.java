package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MySqlConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
