package io.github.dblock.benchmarks.contender;

import javax.sql.DataSource;

import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * db-lock through {@link DbLockTemplate}, built by hand as the auto-configuration would,
 * with the default wait and lease (a lease renewed while held).
 */
final class DbLockTemplateContender extends AcquireReleaseContender<LockHandle> {

	/** Apart from {@code db_lock}, the library tests' table. */
	static final String TABLE = "bench_db_lock";

	private final LockEngine engine;

	private final DbLockTemplate template;

	DbLockTemplateContender(DataSource dataSource, boolean prepare) {
		SqlDialect dialect = SqlDialects.detect(dataSource, TABLE);
		if (prepare) {
			new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
			// what crashed runs left; a run in progress elsewhere keeps its rows (keys are per run)
			new JdbcTemplate(dataSource)
				.update("DELETE FROM " + TABLE + " WHERE expires_at < " + dialect.now() + " - INTERVAL '1' HOUR");
		}
		JdbcLockRepository repository = new JdbcLockRepository(dataSource, dialect);
		// DB_LOCK_BENCH_WAKE_UPS=false: waiters poll alone, as before the wake-ups (PostgreSQL)
		repository.setWakeUps(!"false".equals(System.getenv("DB_LOCK_BENCH_WAKE_UPS")));
		this.engine = new LockEngine(repository, io.github.dblock.engine.LockEngineSettings.of(LockTimes.BACKOFF));
		this.template = new DbLockTemplate(this.engine, "", LockTimes.WAIT, LockTimes.LEASE);
	}

	@Override
	@Nullable LockHandle acquire(String key) {
		try {
			return this.template.acquire(key, null, null);
		}
		catch (LockAcquisitionException ex) {
			return null;
		}
	}

	@Override
	void release(String key, LockHandle held) {
		held.close();
	}

	/** Closes the engine, as closing the application context would. */
	@Override
	public void close() {
		this.engine.close();
	}

}
