package io.github.dblock.benchmarks.contender;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transaction-bound lock written by hand, as db-lock's transaction mode is compared with:
 * a {@link TransactionTemplate} over a {@link DataSourceTransactionManager}, a
 * {@code SELECT ... FOR UPDATE} of the key's row through a {@link JdbcTemplate} (waiting the
 * server's {@code innodb_lock_wait_timeout}), the critical section, the commit. The rows
 * exist beforehand: {@link #prepareKeys} inserts them outside the measured time, so a cycle
 * is the row lock alone (a key without its row is an error). Not durable: the lock ends with
 * the transaction, and with its connection. On PostgreSQL, the same table in its types, the
 * wait bounded by the server's {@code lock_timeout} (none by default: a contender's keys are
 * its threads' own, nothing waits).
 */
final class SelectForUpdateContender implements LockContender {

	static final String TABLE = "bench_tx_row";

	/** Shaped like db-lock's key table ({@code <table>_keys}), with a creation time for clean-up. */
	private static final String DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  lock_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
			  token      BIGINT       NOT NULL DEFAULT 0,
			  created_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			  PRIMARY KEY (lock_key)
			) ENGINE = InnoDB""".formatted(TABLE);

	private static final String POSTGRESQL_DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  lock_key   VARCHAR(255) COLLATE "C" NOT NULL,
			  token      BIGINT       NOT NULL DEFAULT 0,
			  created_at TIMESTAMP(6) NOT NULL DEFAULT LOCALTIMESTAMP,
			  PRIMARY KEY (lock_key)
			)""".formatted(TABLE);

	/** Rows per INSERT when preparing keys. */
	private static final int BATCH = 1000;

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transactions;

	private final boolean postgresql;

	SelectForUpdateContender(DataSource dataSource, boolean prepare) {
		this.jdbc = new JdbcTemplate(dataSource);
		this.postgresql = Databases.postgresql(dataSource);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		if (prepare) {
			this.jdbc.execute(this.postgresql ? POSTGRESQL_DDL : DDL);
			// what earlier runs left; a run in progress elsewhere keeps its rows (keys are per run)
			this.jdbc.update("DELETE FROM " + TABLE + " WHERE created_at < "
					+ (this.postgresql ? "LOCALTIMESTAMP - INTERVAL '1 hour'" : "NOW(6) - INTERVAL 1 HOUR"));
		}
	}

	@Override
	public boolean runLocked(String key, Runnable criticalSection) {
		return Boolean.TRUE.equals(this.transactions.execute((status) -> {
			List<Long> token = this.jdbc.queryForList("SELECT token FROM " + TABLE + " WHERE lock_key = ? FOR UPDATE",
					Long.class, key);
			if (token.isEmpty()) {
				throw new IllegalStateException("No row for key '" + key + "' in " + TABLE
						+ ": the run used more keys than were prepared");
			}
			criticalSection.run();
			return true;
		}));
	}

	@Override
	public void prepareKeys(Stream<String> keys) {
		insertRows(this.jdbc, TABLE, keys, this.postgresql);
	}

	/**
	 * Inserts a row for each key into a table whose other columns have defaults, unless it
	 * exists ({@code INSERT IGNORE}, on PostgreSQL {@code ON CONFLICT DO NOTHING}).
	 */
	static void insertRows(JdbcTemplate jdbc, String table, Stream<String> keys, boolean postgresql) {
		Iterator<String> distinct = keys.distinct().iterator();
		List<String> batch = new ArrayList<>(BATCH);
		while (distinct.hasNext()) {
			batch.add(distinct.next());
			if (batch.size() == BATCH || !distinct.hasNext()) {
				String values = String.join(", ", Collections.nCopies(batch.size(), "(?)"));
				jdbc.update(postgresql ? "INSERT INTO " + table + " (lock_key) VALUES " + values + " ON CONFLICT DO NOTHING"
						: "INSERT IGNORE INTO " + table + " (lock_key) VALUES " + values, batch.toArray());
				batch.clear();
			}
		}
	}

	@Override
	public void close() {
	}

}
