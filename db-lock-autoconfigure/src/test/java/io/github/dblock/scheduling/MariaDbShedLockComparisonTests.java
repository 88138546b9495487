package io.github.dblock.scheduling;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbShedLockComparisonTests extends ShedLockComparisonContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
