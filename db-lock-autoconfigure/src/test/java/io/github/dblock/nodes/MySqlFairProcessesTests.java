package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlFairProcessesTests extends FairProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
