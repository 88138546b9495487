package io.github.dblock.jdbc.dialect;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * MariaDB 10.6 and later. Keys compare byte for byte without padding
 * ({@code utf8mb4_nopad_bin}).
 *
 * @since 0.1.0
 */
public class MariaDbDialect extends MySqlFamilyDialect {

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public MariaDbDialect(String table) {
		super(Database.MARIADB, table);
	}

	/** {@code RETURNING}, which MariaDB's {@code INSERT} has (its {@code UPDATE} has not). */
	@Override
	public String insertReturning(String insert, String columns) {
		return insert + " RETURNING " + columns;
	}

	/**
	 * The insert alone, told not to wait for a row lock: an {@code INSERT IGNORE} of a key
	 * that exists takes a shared lock on its row, and would wait while another transaction
	 * holds the row; a lock-wait timeout at once says the row exists.
	 */
	@Override
	public void ensureKeyRow(JdbcOperations jdbc, String key) {
		try {
			jdbc.update("SET STATEMENT innodb_lock_wait_timeout = 0 FOR " + insertKeyRowSql(), key);
		}
		catch (DataAccessException ex) {
			if (!errors().isLockWaitTimeout(ex)) {
				throw ex;
			}
		}
	}

	/** A sequence of its own: the lease tokens come from {@code AUTO_INCREMENT}. */
	@Override
	public String tokenSequenceSql() {
		return "SELECT NEXTVAL(" + table() + "_keys_token_seq)";
	}

}
