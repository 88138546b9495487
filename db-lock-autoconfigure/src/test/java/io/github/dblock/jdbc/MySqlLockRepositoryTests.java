package io.github.dblock.jdbc;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLockRepositoryTests extends LockRepositoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
