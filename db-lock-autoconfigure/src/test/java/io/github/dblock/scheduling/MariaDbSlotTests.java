package io.github.dblock.scheduling;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbSlotTests extends SlotContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
