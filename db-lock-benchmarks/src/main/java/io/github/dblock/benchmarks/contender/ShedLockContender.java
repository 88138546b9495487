package io.github.dblock.benchmarks.contender;

import java.time.Duration;

import javax.sql.DataSource;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * ShedLock's {@link JdbcTemplateLockProvider} on the database's clock. ShedLock does not
 * wait for a held lock: the caller spins with {@link SpinWait}. On PostgreSQL, ShedLock's
 * documented table for PostgreSQL ({@code TIMESTAMP} columns), under the same name.
 */
final class ShedLockContender extends AcquireReleaseContender<SimpleLock> {

	private static final String TABLE = "bench_shedlock";

	/** ShedLock's documented table for MySQL and MariaDB, under the benchmark's name. */
	private static final String DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  name VARCHAR(64) NOT NULL,
			  lock_until TIMESTAMP(3) NOT NULL,
			  locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
			  locked_by VARCHAR(255) NOT NULL,
			  PRIMARY KEY (name))""".formatted(TABLE);

	/** ShedLock's documented table for PostgreSQL, under the benchmark's name. */
	private static final String POSTGRESQL_DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  name VARCHAR(64) NOT NULL,
			  lock_until TIMESTAMP NOT NULL,
			  locked_at TIMESTAMP NOT NULL,
			  locked_by VARCHAR(255) NOT NULL,
			  PRIMARY KEY (name))""".formatted(TABLE);

	private final LockProvider provider;

	ShedLockContender(DataSource dataSource, boolean prepare) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		if (prepare) {
			boolean postgresql = Databases.postgresql(dataSource);
			jdbc.execute(postgresql ? POSTGRESQL_DDL : DDL);
			// ShedLock keeps a row per name: drop those of runs an hour ago and more
			jdbc.update("DELETE FROM " + TABLE + " WHERE lock_until < " + (postgresql
					? "(CURRENT_TIMESTAMP AT TIME ZONE 'UTC') - INTERVAL '1 hour'" : "UTC_TIMESTAMP(3) - INTERVAL 1 HOUR"));
		}
		this.provider = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
			.withJdbcTemplate(jdbc)
			.withTableName(TABLE)
			.usingDbTime()
			.build());
	}

	@Override
	@Nullable SimpleLock acquire(String key) throws Exception {
		return SpinWait.until(() -> this.provider
			.lock(new LockConfiguration(ClockProvider.now(), key, LockTimes.LEASE, Duration.ZERO))
			.orElse(null));
	}

	@Override
	void release(String key, SimpleLock held) {
		held.unlock();
	}

}
