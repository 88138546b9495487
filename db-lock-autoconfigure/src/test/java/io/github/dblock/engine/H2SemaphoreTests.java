package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2SemaphoreTests extends SemaphoreContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
