package io.github.dblock.jdbc;

import java.util.List;

import io.github.dblock.testsupport.TestDatabase;

class PostgreSqlLateRenewalTests extends LateRenewalContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.POSTGRESQL;
	}

	@Override
	protected List<String> createStall(String table) {
		return List.of("CREATE OR REPLACE FUNCTION " + table + "_test_late() RETURNS trigger AS $$ BEGIN"
				+ " IF NEW.owner = '" + LATE + "' THEN PERFORM pg_sleep(" + STALL_SECONDS + "); END IF; RETURN NEW; END"
				+ " $$ LANGUAGE plpgsql",
				"CREATE TRIGGER " + table + "_test_late BEFORE UPDATE ON " + table + " FOR EACH ROW EXECUTE FUNCTION "
						+ table + "_test_late()");
	}

	@Override
	protected List<String> dropStall(String table) {
		return List.of("DROP TRIGGER IF EXISTS " + table + "_test_late ON " + table,
				"DROP FUNCTION IF EXISTS " + table + "_test_late()");
	}

	@Override
	protected String sleepingSessionsSql() {
		return "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'UPDATE%'";
	}

	@Override
	protected String lockWaitsSql() {
		return "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
	}

}
