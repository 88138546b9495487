package io.github.dblock.integration;

import io.github.dblock.testsupport.TestDatabase;

class H2DbLockRegistryTests extends DbLockRegistryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
