package io.github.dblock.scheduling;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlSlotTests extends SlotContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
