package io.github.dblock;

import io.github.dblock.testsupport.TestDatabase;

class H2LeaseSafetyTests extends LeaseSafetyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
