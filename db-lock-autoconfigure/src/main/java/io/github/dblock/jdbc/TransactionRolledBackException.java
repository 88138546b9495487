package io.github.dblock.jdbc;

import org.springframework.dao.DataAccessException;

/**
 * The database rolled back the caller's whole transaction while a transaction-mode lock
 * statement ran in it, not the statement alone: a deadlock on MySQL and MariaDB, or a
 * lock-wait timeout on a server with {@code innodb_rollback_on_timeout=ON}. The row locks
 * the transaction held and everything it wrote are gone; statements sent on its connection
 * after this run in a new transaction. Never retried: nothing may be locked in what is
 * left of it.
 *
 * @since 0.1.0
 */
public class TransactionRolledBackException extends DataAccessException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what the database did
	 * @param cause the database's error
	 */
	public TransactionRolledBackException(String message, Throwable cause) {
		super(message, cause);
	}

}
