package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockHistoryProcessesTests extends LockHistoryProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
