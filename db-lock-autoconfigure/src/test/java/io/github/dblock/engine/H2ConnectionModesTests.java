package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2ConnectionModesTests extends ConnectionModesContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

	@Override
	protected boolean hasNamedLocks() {
		return false;
	}

}
