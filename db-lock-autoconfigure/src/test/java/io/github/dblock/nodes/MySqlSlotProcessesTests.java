package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MySqlSlotProcessesTests extends SlotProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
