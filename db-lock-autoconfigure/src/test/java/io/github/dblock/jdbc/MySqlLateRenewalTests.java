package io.github.dblock.jdbc;

import io.github.dblock.testsupport.TestDatabase;

/** MySQL: MariaDB's trigger, session list and locking reads. */
class MySqlLateRenewalTests extends MariaDbLateRenewalTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MYSQL;
	}

}
