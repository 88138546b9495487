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

	/**
	 * An anonymous compound statement, {@code BEGIN NOT ATOMIC ... END}, which the server
	 * runs as one statement and the driver sends as one (whatever {@code allowMultiQueries}
	 * says): in autocommit each statement inside it is a transaction of its own, and each
	 * {@code SELECT} or {@code RETURNING} inside it gives one result set. The driver's query
	 * timeout ({@code max_statement_time}) bounds the whole string.
	 */
	@Override
	public String sentInSequence(String... statements) {
		return "BEGIN NOT ATOMIC " + String.join("; ", statements) + "; END";
	}

	/** {@code ROW_COUNT()}. */
	@Override
	public String changedRows() {
		return "ROW_COUNT()";
	}

	/** The queue's {@code AUTO_INCREMENT}, returned ({@code RETURNING ticket}). */
	@Override
	public String fairEnqueueSql(String queue, String keys, String lease) {
		return super.fairEnqueueSql(queue, keys, lease) + " RETURNING ticket";
	}

	/** {@code false}: the enqueue returns it. */
	@Override
	public boolean ticketIsGeneratedKey() {
		return false;
	}

	/**
	 * {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING owner}: the owner and the end
	 * are set if the intent was this owner's or has ended. Each assignment states that
	 * condition in full, so that it holds whether an assignment reads the columns as the one
	 * before it left them (MariaDB's default) or as they were
	 * ({@code SIMULTANEOUS_ASSIGNMENT} in the session's {@code sql_mode}). The row is
	 * returned whether or not the claim took it.
	 */
	@Override
	public String claimIntentSql(String intents, String expiresAt) {
		return "INSERT INTO " + intents + " (lock_key, owner, expires_at) VALUES (?, ?, " + expiresAt
				+ ") ON DUPLICATE KEY UPDATE owner = IF(owner = VALUES(owner) OR expires_at <= " + now()
				+ ", VALUES(owner), owner), expires_at = IF(owner = VALUES(owner) OR expires_at <= " + now()
				+ ", VALUES(expires_at), expires_at) "
				+ "RETURNING owner";
	}

	/** A sequence of its own: the lease tokens come from {@code AUTO_INCREMENT}. */
	@Override
	public String tokenSequenceSql() {
		return "SELECT NEXTVAL(" + table() + "_keys_token_seq)";
	}

}
