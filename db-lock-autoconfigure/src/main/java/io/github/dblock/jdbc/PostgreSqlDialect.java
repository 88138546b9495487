package io.github.dblock.jdbc;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * PostgreSQL 14 and later: one {@code INSERT ... ON CONFLICT DO UPDATE ... RETURNING} takes
 * a free key or an expired lease, or marks a held key as wanted. Time is
 * {@code clock_timestamp()}, not {@code CURRENT_TIMESTAMP}, which is frozen at the start of
 * a transaction; expiry is compared with the one value the statement read
 * ({@code EXCLUDED.acquired_at}), so that every column decides alike.
 */
public class PostgreSqlDialect extends SqlDialect {

	private final String acquireSql;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public PostgreSqlDialect(String table) {
		super("postgresql", table);
		this.acquireSql = compact("""
				INSERT INTO %1$s AS l (lock_key, owner, token, acquired_at, expires_at)
				VALUES (?, ?, nextval('%1$s_token_seq'), %2$s, %3$s)
				ON CONFLICT (lock_key) DO UPDATE SET
				  owner = CASE WHEN %4$s THEN EXCLUDED.owner ELSE l.owner END,
				  token = CASE WHEN %4$s THEN EXCLUDED.token ELSE l.token END,
				  acquired_at = CASE WHEN %4$s THEN EXCLUDED.acquired_at ELSE l.acquired_at END,
				  expires_at = CASE WHEN %4$s THEN EXCLUDED.expires_at ELSE l.expires_at END,
				  wanted_at = CASE WHEN %4$s THEN NULL ELSE EXCLUDED.acquired_at END
				RETURNING owner, token, expires_at""".formatted(table(), now(), plusMicros(now()),
				"l.expires_at <= EXCLUDED.acquired_at"));
	}

	@Override
	public String now() {
		return "clock_timestamp()";
	}

	@Override
	protected String plusMicros(String time) {
		return time + " + ? * INTERVAL '1 microsecond'";
	}

	/** Skips rows a renewal has locked; the outer condition checks expiry once more. */
	@Override
	protected String deleteExpiredSql(String table) {
		return "DELETE FROM %1$s WHERE lock_key IN (SELECT lock_key FROM %1$s WHERE expires_at <= %2$s LIMIT ? FOR UPDATE SKIP LOCKED) AND expires_at <= %2$s"
			.formatted(table, now());
	}

	@Override
	protected String acquireSql() {
		return this.acquireSql;
	}

	/** One statement: the {@code UPDATE} returns the new ends. */
	@Override
	protected Map<String, Instant> renewRows(JdbcOperations jdbc, int count, Object[] parameters, Object[] heldBy) {
		Map<String, Instant> ends = new HashMap<>();
		jdbc.query(renewAllSql(count) + " RETURNING owner, expires_at", (rs) -> {
			ends.put(rs.getString("owner"), readInstant(rs, "expires_at"));
		}, parameters);
		return ends;
	}

	/** serialization_failure, deadlock_detected and lock_not_available. */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return "40001".equals(sqlState) || "40P01".equals(sqlState) || "55P03".equals(sqlState);
	}

}
