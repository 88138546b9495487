package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2ReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
