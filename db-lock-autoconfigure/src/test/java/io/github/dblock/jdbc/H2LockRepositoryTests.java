package io.github.dblock.jdbc;

import io.github.dblock.testsupport.TestDatabase;

class H2LockRepositoryTests extends LockRepositoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

}
