package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
