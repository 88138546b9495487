package io.github.dblock.jpa;

import io.github.dblock.testsupport.TestDatabase;

class H2JpaIsolationTests extends JpaIsolationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
