package io.github.dblock.jpa;

import io.github.dblock.testsupport.TestDatabase;

class MySqlJpaIsolationTests extends JpaIsolationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
