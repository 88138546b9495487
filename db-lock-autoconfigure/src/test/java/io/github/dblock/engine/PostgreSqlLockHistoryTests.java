package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
