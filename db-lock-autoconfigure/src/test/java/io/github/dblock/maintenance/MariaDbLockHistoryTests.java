package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
