package io.github.dblock.jdbc;

import java.util.List;

import io.github.dblock.testsupport.TestDatabase;

class MySqlLateRenewalTests extends LateRenewalContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

	@Override
	protected List<String> createStall(String table) {
		return List.of("CREATE TRIGGER " + table + "_test_late BEFORE UPDATE ON " + table + " FOR EACH ROW BEGIN"
				+ " IF NEW.owner = '" + LATE + "' THEN DO SLEEP(" + STALL_SECONDS + "); END IF; END");
	}

	@Override
	protected List<String> dropStall(String table) {
		return List.of("DROP TRIGGER IF EXISTS " + table + "_test_late");
	}

	@Override
	protected String sleepingSessionsSql() {
		return "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User sleep'";
	}

	@Override
	protected String lockWaitsSql() {
		return "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'";
	}

	@Override
	protected boolean writerInsertWaitsForRowLocks() {
		return true;
	}

}
