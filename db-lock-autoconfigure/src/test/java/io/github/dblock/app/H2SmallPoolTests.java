package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class H2SmallPoolTests extends SmallPoolContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
