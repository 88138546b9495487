package io.github.dblock.jdbc;

import java.util.List;

import io.github.dblock.testsupport.TestDatabase;

/** H2: the take-overs during a guarded commit only (no trigger sleeps here). */
class H2LateRenewalTests extends LateRenewalContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2;
	}

	@Override
	protected List<String> createStall(String table) {
		return List.of();
	}

	@Override
	protected List<String> dropStall(String table) {
		return List.of();
	}

	@Override
	protected String sleepingSessionsSql() {
		return "SELECT 0";
	}

	@Override
	protected String lockWaitsSql() {
		return "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL";
	}

}
