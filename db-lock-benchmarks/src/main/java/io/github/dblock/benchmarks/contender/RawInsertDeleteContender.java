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
 * with nothing of db-lock's engine around it. On PostgreSQL, the same tables in its
 * types (a {@code BIGSERIAL} token, {@code TIMESTAMP(6)}, keys compared by byte as
 * {@code COLLATE "C"}); a duplicate key aborts nothing, each statement being in autocommit.
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

	private static final String POSTGRESQL_SEED_DDL = """
			CREATE TABLE IF NOT EXISTS %s (
			  lock_key   VARCHAR(255) COLLATE "C" NOT NULL,
			  owner      VARCHAR(128) NOT NULL,
			  created_at TIMESTAMP(6) NOT NULL DEFAULT LOCALTIMESTAMP,
			  PRIMARY KEY (lock_key)
			)""";

	private static final String POSTGRESQL_LEASE_ROW_DDL = """
			CREATE TABLE IF NOT EXISTS %1$s (
			  lock_key   VARCHAR(255) COLLATE "C" NOT NULL,
			  owner      VARCHAR(128) NOT NULL,
			  token      BIGSERIAL    NOT NULL,
			  created_at TIMESTAMP(6) NOT NULL DEFAULT LOCALTIMESTAMP,
			  expires_at TIMESTAMP(6) NOT NULL,
			  wanted_at  TIMESTAMP(6) NULL,
			  PRIMARY KEY (lock_key)
			);
			CREATE INDEX IF NOT EXISTS %1$s_token_idx ON %1$s (token);
			CREATE INDEX IF NOT EXISTS %1$s_expires_idx ON %1$s (expires_at)""";

	private final JdbcTemplate jdbc;

	private final String insert;

	private final String delete;

	RawInsertDeleteContender(DataSource dataSource, boolean prepare, boolean leaseRow) {
		this.jdbc = new JdbcTemplate(dataSource);
		String table = leaseRow ? "bench_raw_lease_row" : "bench_raw_lock";
		boolean postgresql = Databases.postgresql(dataSource);
		String leaseEnd = postgresql ? "(CURRENT_TIMESTAMP AT TIME ZONE 'UTC') + INTERVAL '30 seconds'"
				: "UTC_TIMESTAMP(6) + INTERVAL 30 SECOND";
		this.insert = leaseRow
				? "INSERT INTO " + table + " (lock_key, owner, expires_at) VALUES (?, ?, " + leaseEnd + ")"
				: "INSERT INTO " + table + " (lock_key, owner) VALUES (?, ?)";
		this.delete = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ?";
		if (prepare) {
			String ddl = postgresql ? (leaseRow ? POSTGRESQL_LEASE_ROW_DDL : POSTGRESQL_SEED_DDL)
					: (leaseRow ? LEASE_ROW_DDL : SEED_DDL);
			for (String statement : ddl.formatted(table).split(";")) {
				this.jdbc.execute(statement);
			}
			// what crashed runs left; a run in progress elsewhere keeps its rows (keys are per run)
			this.jdbc.update("DELETE FROM " + table + " WHERE created_at < "
					+ (postgresql ? "LOCALTIMESTAMP - INTERVAL '1 hour'" : "NOW(6) - INTERVAL 1 HOUR"));
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
