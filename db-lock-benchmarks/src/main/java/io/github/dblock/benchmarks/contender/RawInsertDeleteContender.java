package io.github.dblock.benchmarks.contender;

import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The seed documents' lock: INSERT a row under a unique key to lock, DELETE it to unlock,
 * each statement in autocommit; a duplicate key means held, and the caller spins with
 * {@link SpinWait}. Durable, two statements, no expiry, no fencing. On db-lock's row (a
 * table shaped like db-lock's: an {@code AUTO_INCREMENT} token and an index on the lease's
 * end, three index entries a row instead of one), it shows what that row costs the server
 * with nothing of db-lock's engine around it.
 */
final class RawInsertDeleteContender extends AcquireReleaseContender<String> {

	private static final String SEED_DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  lock_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
			  owner      VARCHAR(128) NOT NULL,
			  created_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			  PRIMARY KEY (lock_key)
			) ENGINE = InnoDB""";

	private static final String LEASE_ROW_DDL = """
			CREATE TABLE IF NOT EXISTS %1$s (
			  lock_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
			  owner      VARCHAR(128) NOT NULL,
			  token      BIGINT       NOT NULL AUTO_INCREMENT,
			  created_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			  expires_at DATETIME(6)  NOT NULL,
			  wanted_at  DATETIME(6)  NULL,
			  PRIMARY KEY (lock_key),
			  KEY %1$s_token_idx (token),
			  KEY %1$s_expires_idx (expires_at)
			) ENGINE = InnoDB""";

	private final JdbcTemplate jdbc;

	private final String insert;

	private final String delete;

	RawInsertDeleteContender(DataSource dataSource, boolean prepare, boolean leaseRow) {
		this.jdbc = new JdbcTemplate(dataSource);
		String table = leaseRow ? "bench_raw_lease_row" : "bench_raw_lock";
		this.insert = leaseRow
				? "INSERT INTO " + table
						+ " (lock_key, owner, expires_at) VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL 30 SECOND)"
				: "INSERT INTO " + table + " (lock_key, owner) VALUES (?, ?)";
		this.delete = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ?";
		if (prepare) {
			this.jdbc.execute((leaseRow ? LEASE_ROW_DDL : SEED_DDL).formatted(table));
			// what crashed runs left; a run in progress elsewhere keeps its rows (keys are per run)
			this.jdbc.update("DELETE FROM " + table + " WHERE created_at < NOW(6) - INTERVAL 1 HOUR");
		}
	}

	@Override
	@Nullable String acquire(String key) throws Exception {
		String owner = UUID.randomUUID().toString();
		return SpinWait.until(() -> tryInsert(key, owner));
	}

	private @Nullable String tryInsert(String key, String owner) {
		try {
			this.jdbc.update(this.insert, key, owner);
			return owner;
		}
		catch (DuplicateKeyException ex) {
			return null;
		}
	}

	@Override
	void release(String key, String owner) {
		this.jdbc.update(this.delete, key, owner);
	}

}
