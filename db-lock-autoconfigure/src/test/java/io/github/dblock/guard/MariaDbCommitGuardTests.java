package io.github.dblock.guard;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbCommitGuardTests extends CommitGuardContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}
