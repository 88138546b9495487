package io.github.dblock.jdbc;

import io.github.dblock.testsupport.TestDatabase;

class H2MySqlModeLockRepositoryTests extends LockRepositoryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2_MYSQL_MODE;
	}

}
