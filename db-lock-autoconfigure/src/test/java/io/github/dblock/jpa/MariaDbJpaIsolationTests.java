package io.github.dblock.jpa;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbJpaIsolationTests extends JpaIsolationContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
