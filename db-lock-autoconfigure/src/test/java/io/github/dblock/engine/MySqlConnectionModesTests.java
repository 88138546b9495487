package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
