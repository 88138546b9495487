package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
