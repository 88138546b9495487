package io.github.dblock.benchmarks;

import java.time.Duration;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockProperties;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.benchmarks.contender.LockContender;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.maintenance.LockReaper;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * db-lock's lease mode as the curves use it: a pool (through a {@link StatementTally}),
 * an engine and a {@link DbLockTemplate} on a lock table of the curves' own,
 * {@value #TABLE}, so that the filler rows of the table-size and reaper curves meet no
 * other scenario; with db-lock's default back-off, wait and reaper batch. Also writes
 * those filler rows, in bulk, with one SQL statement per database.
 */
final class CurveLocks implements AutoCloseable {

	/** The curves' lock table. */
	static final String TABLE = "bench_curve_lock";

	/** db-lock's default wait. */
	static final Duration WAIT = Duration.ofSeconds(5);

	/** Filler rows are written this many per statement. */
	private static final int FILL_BATCH = 100_000;

	final HikariDataSource pool;

	final DataSource counted;

	final SqlDialect dialect;

	final JdbcLockRepository repository;

	final LockEngine engine;

	final DbLockTemplate template;

	private final boolean postgresql;

	/**
	 * Opens a pool, migrates the table and starts an engine.
	 * @param settings where
	 * @param poolSize the pool's connections
	 * @param lease the default lease (renewed while held)
	 * @param renewInterval how often the watchdog renews; {@code null} for a third of the lease
	 */
	CurveLocks(BenchSettings settings, int poolSize, Duration lease, Duration renewInterval) throws Exception {
		this.pool = settings.withPoolSize(poolSize).openPool("curve");
		this.counted = StatementTally.counting(this.pool);
		this.postgresql = settings.postgresql();
		this.dialect = SqlDialects.detect(this.pool, TABLE);
		new DbLockSchemaMigration(this.pool, this.dialect).afterPropertiesSet();
		this.repository = new JdbcLockRepository(this.counted, this.dialect);
		DbLockProperties.Backoff backoff = new DbLockProperties().getBackoff();
		this.engine = new LockEngine(this.repository, LockEngineSettings.of(new Backoff(backoff.getInitial(),
				backoff.getMax())).withRenewInterval(renewInterval));
		this.template = new DbLockTemplate(this.engine, "", WAIT, lease);
	}

	/** With the default lease of 30 s, renewed every 10 s. */
	CurveLocks(BenchSettings settings, int poolSize) throws Exception {
		this(settings, poolSize, Duration.ofSeconds(30), null);
	}

	/** A reaper with db-lock's default batch size, not started. */
	LockReaper reaper() {
		DbLockProperties.Reaper defaults = new DbLockProperties().getReaper();
		return new LockReaper(this.repository, defaults.getBatchSize(), defaults.getInterval(), this.engine.scheduler());
	}

	/** The template as a {@link CycleLoop} contender: acquire, run, close. */
	LockContender contender() {
		return new LockContender() {

			@Override
			public boolean runLocked(String key, Runnable criticalSection) {
				LockHandle handle;
				try {
					handle = CurveLocks.this.template.acquire(key, null, null);
				}
				catch (LockAcquisitionException ex) {
					return false;
				}
				try {
					criticalSection.run();
				}
				finally {
					handle.close();
				}
				return true;
			}

			@Override
			public void close() {
			}

		};
	}

	/** Deletes every row of the curves' table. */
	void empty() {
		new JdbcTemplate(this.pool).execute("TRUNCATE TABLE " + TABLE);
	}

	/** Rows in the table. */
	long rows() {
		Long rows = new JdbcTemplate(this.pool).queryForObject("SELECT COUNT(*) FROM " + TABLE, Long.class);
		return (rows != null) ? rows : 0;
	}

	/**
	 * Writes filler rows {@code from} (inclusive) to {@code to} (exclusive), in bulk: leases
	 * of other owners, live for a day, or (with {@code expired}) ended an hour ago.
	 */
	void fill(String prefix, long from, long to, boolean expired) {
		JdbcTemplate jdbc = new JdbcTemplate(this.pool);
		for (long start = from; start < to; start += FILL_BATCH) {
			long end = Math.min(to, start + FILL_BATCH);
			jdbc.update(this.postgresql ? postgresqlFill(prefix, start, end, expired)
					: mysqlFill(prefix, start, end, expired));
		}
	}

	private static String postgresqlFill(String prefix, long from, long to, boolean expired) {
		String expires = expired ? "now() - interval '1' hour" : "now() + interval '1' day";
		return "INSERT INTO " + TABLE + " (lock_key, owner, token, acquired_at, expires_at) SELECT '" + prefix
				+ "-' || n, 'filler', nextval('" + TABLE + "_token_seq'), now() - interval '2' hour, " + expires
				+ " FROM generate_series(" + from + ", " + (to - 1) + ") AS n";
	}

	/** Numbers from a cross join of digits: no sequence engine or recursion limit needed. */
	private static String mysqlFill(String prefix, long from, long to, boolean expired) {
		String digits = "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
				+ "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)";
		String expires = expired ? "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR" : "UTC_TIMESTAMP(6) + INTERVAL 1 DAY";
		return "INSERT INTO " + TABLE + " (lock_key, owner, acquired_at, expires_at) SELECT CONCAT('" + prefix
				+ "-', n), 'filler', UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, " + expires + " FROM (SELECT " + from
				+ " + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n FROM " + digits + " a CROSS JOIN "
				+ digits + " b CROSS JOIN " + digits + " c CROSS JOIN " + digits + " e CROSS JOIN " + digits
				+ " f) numbers WHERE n < " + to;
	}

	@Override
	public void close() {
		this.engine.close();
		this.pool.close();
	}

}
