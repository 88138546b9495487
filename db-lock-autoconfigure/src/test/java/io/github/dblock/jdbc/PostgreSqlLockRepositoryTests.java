package io.github.dblock.jdbc;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLockRepositoryTests extends LockRepositoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
