package io.github.dblock.scheduling;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlShedLockComparisonTests extends ShedLockComparisonContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
