package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockReaperTests extends LockReaperContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
