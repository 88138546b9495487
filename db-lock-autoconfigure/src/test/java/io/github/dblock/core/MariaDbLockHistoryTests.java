package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
