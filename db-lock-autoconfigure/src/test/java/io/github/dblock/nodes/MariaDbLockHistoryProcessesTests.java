package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockHistoryProcessesTests extends LockHistoryProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
