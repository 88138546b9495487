package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlReadWriteProcessesTests extends ReadWriteProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
