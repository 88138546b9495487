package io.github.dblock.jpa;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlJpaIsolationTests extends JpaIsolationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
