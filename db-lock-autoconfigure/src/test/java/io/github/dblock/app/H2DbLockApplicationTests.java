package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class H2DbLockApplicationTests extends DbLockApplicationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
