package io.github.dblock.scheduling;

import io.github.dblock.testsupport.TestDatabase;

class MySqlSlotTests extends SlotContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
