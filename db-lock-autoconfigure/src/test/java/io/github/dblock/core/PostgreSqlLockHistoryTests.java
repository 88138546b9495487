package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
