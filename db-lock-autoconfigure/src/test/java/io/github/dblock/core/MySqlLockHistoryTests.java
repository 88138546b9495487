package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
