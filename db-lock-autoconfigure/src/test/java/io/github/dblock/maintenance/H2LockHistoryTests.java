package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class H2LockHistoryTests extends LockHistoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

	@Override
	protected boolean hasNamedLocks() {
		return false;
	}

}
