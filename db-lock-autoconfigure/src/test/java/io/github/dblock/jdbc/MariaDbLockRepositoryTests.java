package io.github.dblock.jdbc;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbLockRepositoryTests extends LockRepositoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
