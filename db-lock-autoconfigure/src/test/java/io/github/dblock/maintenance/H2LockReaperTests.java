package io.github.dblock.maintenance;

import io.github.dblock.testsupport.TestDatabase;

class H2LockReaperTests extends LockReaperContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
