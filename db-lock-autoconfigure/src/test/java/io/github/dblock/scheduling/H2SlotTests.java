package io.github.dblock.scheduling;

import io.github.dblock.testsupport.TestDatabase;

class H2SlotTests extends SlotContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
