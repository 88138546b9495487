package io.github.dblock.benchmarks.contender;

import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The seed documents' lock: INSERT a row under a unique key to lock, DELETE it to unlock,
 * each statement in autocommit; a duplicate key means held, and the caller spins with
 * {@link SpinWait}. Durable, two statements, no expiry, no fencing.
 */
final class RawInsertDeleteContender extends AcquireReleaseContender<String> {

	private static final String TABLE = "bench_raw_lock";

	private static final String DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  lock_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
			  owner      VARCHAR(128) NOT NULL,
			  created_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			  PRIMARY KEY (lock_key)
			) ENGINE = InnoDB""".formatted(TABLE);

	private static final String INSERT = "INSERT INTO " + TABLE + " (lock_key, owner) VALUES (?, ?)";

	private static final String DELETE = "DELETE FROM " + TABLE + " WHERE lock_key = ? AND owner = ?";

	private final JdbcTemplate jdbc;

	RawInsertDeleteContender(DataSource dataSource, boolean prepare) {
		this.jdbc = new JdbcTemplate(dataSource);
		if (prepare) {
			this.jdbc.execute(DDL);
			// what crashed runs left; a run in progress elsewhere keeps its rows (keys are per run)
			this.jdbc.update("DELETE FROM " + TABLE + " WHERE created_at < NOW(6) - INTERVAL 1 HOUR");
		}
	}

	@Override
	@Nullable String acquire(String key) throws Exception {
		String owner = UUID.randomUUID().toString();
		return SpinWait.until(() -> tryInsert(key, owner));
	}

	private @Nullable String tryInsert(String key, String owner) {
		try {
			this.jdbc.update(INSERT, key, owner);
			return owner;
		}
		catch (DuplicateKeyException ex) {
			return null;
		}
	}

	@Override
	void release(String key, String owner) {
		this.jdbc.update(DELETE, key, owner);
	}

}
