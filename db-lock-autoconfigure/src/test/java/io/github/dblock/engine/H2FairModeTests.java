package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2FairModeTests extends FairModeContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
