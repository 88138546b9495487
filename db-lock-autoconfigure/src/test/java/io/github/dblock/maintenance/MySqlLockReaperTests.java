package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockReaperTests extends LockReaperContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
