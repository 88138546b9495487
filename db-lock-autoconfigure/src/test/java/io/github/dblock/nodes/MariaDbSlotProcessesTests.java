package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbSlotProcessesTests extends SlotProcessesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
