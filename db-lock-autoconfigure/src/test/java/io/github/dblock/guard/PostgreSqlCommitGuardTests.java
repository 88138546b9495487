package io.github.dblock.guard;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlCommitGuardTests extends CommitGuardContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

}
