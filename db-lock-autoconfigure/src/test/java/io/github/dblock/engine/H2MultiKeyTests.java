package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2MultiKeyTests extends MultiKeyContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
