package io.github.dblock.guard;

import io.github.dblock.testsupport.TestDatabase;

class MySqlCommitGuardTests extends CommitGuardContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
