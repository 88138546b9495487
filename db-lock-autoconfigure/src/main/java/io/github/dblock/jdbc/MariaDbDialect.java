package io.github.dblock.jdbc;

import org.jspecify.annotations.Nullable;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * MariaDB 10.6 and later: one {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}
 * takes a free key or an expired lease and reports the holder otherwise. Tokens come from
 * a sequence; times are {@code DATETIME(6)} in UTC, independent of the session time zone.
 */
public class MariaDbDialect extends SqlDialect {

	private final String acquireSql;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public MariaDbDialect(String table) {
		super("mariadb", table);
		String expired = "expires_at <= " + now();
		// ON DUPLICATE KEY UPDATE assigns left to right: expires_at goes last so that each
		// condition still sees the old lease
		this.acquireSql = """
				INSERT INTO %1$s (lock_key, owner, token, acquired_at, expires_at)
				VALUES (?, ?, NEXTVAL(%1$s_token_seq), %2$s, %2$s + INTERVAL ? MICROSECOND)
				ON DUPLICATE KEY UPDATE
				  token = IF(%3$s, VALUES(token), token),
				  owner = IF(%3$s, VALUES(owner), owner),
				  acquired_at = IF(%3$s, VALUES(acquired_at), acquired_at),
				  expires_at = IF(%3$s, VALUES(expires_at), expires_at)
				RETURNING owner, token, expires_at""".formatted(table(), now(), expired);
	}

	@Override
	public String now() {
		return "UTC_TIMESTAMP(6)";
	}

	@Override
	protected String acquireSql() {
		return this.acquireSql;
	}

	@Override
	protected Instant readInstant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
	}

	/** InnoDB's lock-wait timeout and deadlock. */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return errorCode == 1205 || errorCode == 1213;
	}

}
