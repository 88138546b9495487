package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockReaperTests extends LockReaperContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
