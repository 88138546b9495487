package io.github.dblock.jdbc.dialect;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * MySQL 8.0 and later. Keys compare byte for byte without padding
 * ({@code utf8mb4_0900_bin}).
 *
 * @since 0.1.0
 */
public class MySqlDialect extends MySqlFamilyDialect {

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public MySqlDialect(String table) {
		super(Database.MYSQL, table);
	}

	/**
	 * MySQL has no {@code FOR UPDATE WAIT n}: the session's {@code innodb_lock_wait_timeout}
	 * (whole seconds) is set for the statement and put back after it; {@code SKIP LOCKED}
	 * below one second.
	 */
	@Override
	public boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		long seconds = waitMillis / 1000;
		if (seconds == 0) {
			return !jdbc.queryForList(selectKeyRowSql() + " FOR UPDATE SKIP LOCKED", Integer.class, key).isEmpty();
		}
		Long previous = jdbc.queryForObject("SELECT @@SESSION.innodb_lock_wait_timeout", Long.class);
		jdbc.update("SET SESSION innodb_lock_wait_timeout = " + seconds);
		try {
			return !jdbc.queryForList(selectKeyRowSql() + " FOR UPDATE", Integer.class, key).isEmpty();
		}
		finally {
			jdbc.update("SET SESSION innodb_lock_wait_timeout = " + previous);
		}
	}

	/** No sequences: tokens are counted per key in the token table. */
	@Override
	public @Nullable String tokenSequenceSql() {
		return null;
	}

}
