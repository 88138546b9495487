package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
