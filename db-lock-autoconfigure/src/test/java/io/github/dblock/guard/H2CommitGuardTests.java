package io.github.dblock.guard;

import io.github.dblock.testsupport.TestDatabase;

class H2CommitGuardTests extends CommitGuardContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
