package io.github.dblock.core;

import io.github.dblock.testsupport.TestDatabase;

class H2FairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
