package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
