package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2LockEngineTests extends LockEngineContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
