package io.github.dblock.jdbc;

/**
 * MariaDB 10.6 and later: one {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}
 * takes a free key or an expired lease and reports the holder otherwise. Tokens come from
 * a sequence; times are {@code DATETIME(6)} in UTC, independent of the session time zone.
 */
public class MariaDbDialect extends MySqlFamilyDialect {

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
		this.acquireSql = compact("""
				INSERT INTO %1$s (lock_key, owner, token, acquired_at, expires_at)
				VALUES (?, ?, NEXTVAL(%1$s_token_seq), %2$s, %4$s)
				ON DUPLICATE KEY UPDATE
				  token = IF(%3$s, VALUES(token), token),
				  owner = IF(%3$s, VALUES(owner), owner),
				  acquired_at = IF(%3$s, VALUES(acquired_at), acquired_at),
				  expires_at = IF(%3$s, VALUES(expires_at), expires_at)
				RETURNING owner, token, expires_at""".formatted(table(), now(), expired, plusMicros(now())));
	}

	@Override
	protected String acquireSql() {
		return this.acquireSql;
	}

}
