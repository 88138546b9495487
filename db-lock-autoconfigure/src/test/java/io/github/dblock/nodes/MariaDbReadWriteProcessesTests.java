package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbReadWriteProcessesTests extends ReadWriteProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
