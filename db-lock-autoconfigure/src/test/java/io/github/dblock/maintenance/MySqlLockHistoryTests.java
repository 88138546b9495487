package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
