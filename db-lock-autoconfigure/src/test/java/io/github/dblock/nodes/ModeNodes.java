package io.github.dblock.nodes;

import java.time.Duration;

import javax.sql.DataSource;

import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;

/**
 * What the nodes of the transaction and named modes share with their tests: an engine with
 * all three modes on one data source, as the auto-configuration builds it when db-lock
 * shares the application's pool, and the tables the nodes write.
 */
final class ModeNodes {

	/** The counter row: its value and the highest fencing token that wrote it. */
	static final String COUNTER_TABLE = "db_lock_test_mode_counter";

	/** How many threads are between acquisition and release, counted in autocommit. */
	static final String HOLDERS_TABLE = "db_lock_test_mode_holders";

	/** Rows a node writes to tell its test what it did: a name and a value. */
	static final String SIGNAL_TABLE = "db_lock_test_mode_signal";

	private ModeNodes() {
	}

	/** An engine of all three modes with db-lock's default back-off. */
	static LockEngine engine(DataSource dataSource) {
		JdbcLockRepository leases = new JdbcLockRepository(dataSource,
				SqlDialects.detect(dataSource, TestDatabase.TABLE));
		return new LockEngine(leases, new JdbcConnectionLockRepository(leases.connections(), dataSource),
				LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
	}

}
