package io.github.dblock.jdbc;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Storage of the connection-bound lock modes: the transaction mode's row locks, taken on
 * the caller's transactional connection and ended by its commit or rollback, and the named
 * mode's server locks ({@code GET_LOCK}, advisory locks), held by a connection of their own
 * until released or until the connection ends.
 *
 * @since 0.1.0
 */
public interface ConnectionLockRepository {

	/**
	 * Locks a key's row in the thread's current transaction, on its connection, creating
	 * the row first if needed (in a short transaction of its own). A wait that runs out rolls
	 * back nothing of the caller's.
	 * @param key the stored key
	 * @param wait how long to wait at most while another transaction holds the row; zero for
	 * one look (a database that counts whole seconds waits the whole seconds below it)
	 * @return whether the row is locked; {@code false} if another transaction held it
	 * @throws TransactionRolledBackException if the database rolled back the caller's whole
	 * transaction, not the statement alone (a deadlock on MySQL and MariaDB, a lock-wait
	 * timeout with {@code innodb_rollback_on_timeout=ON}): never to be retried in it
	 * @throws org.springframework.dao.DataAccessException if the database failed
	 * @throws org.springframework.transaction.IllegalTransactionStateException if no
	 * transaction on this repository's data source is active
	 */
	boolean lockInTransaction(String key, Duration wait);

	/**
	 * Draws a key's next transaction-mode fencing token so that a transaction that rolls
	 * back, or a holder that dies, never gives it back: from a sequence on the caller's
	 * connection (not transactional), or where there is none (MySQL) in a statement of its
	 * own on a connection of its own, committed at once. Called while the caller's
	 * transaction holds the key.
	 * @param key the stored key
	 * @return the new token
	 */
	long nextTransactionToken(String key);

	/**
	 * Takes a key's named lock on a connection of its own, which then holds it.
	 * @param key the stored key
	 * @param wait how long to wait at most; zero for one attempt
	 * @return the lock, or {@code null} if another session holds it past the wait
	 * @throws org.springframework.dao.DataAccessException if the database failed
	 * @throws UnsupportedOperationException if the database has no named locks
	 */
	@Nullable NamedLock tryNamedLock(String key, Duration wait);

	/**
	 * Why named locks cannot be used here, if they cannot: the database has none (H2), or it
	 * is a multi-primary cluster whose nodes each give their own.
	 * @return the reason, or {@code null} if they can be used
	 */
	@Nullable String namedLocksUnavailable();

	/**
	 * Why the transaction mode cannot be used here, if it cannot: the database is a
	 * multi-primary cluster, whose nodes lock rows each on their own until commit.
	 * @return the reason, or {@code null} if it can be used
	 */
	@Nullable String transactionLocksUnavailable();

	/**
	 * What makes a transaction-mode wait that runs out roll back the caller's whole
	 * transaction here, if it does (MySQL and MariaDB with {@code innodb_rollback_on_timeout=ON}).
	 * @return what shows it, or {@code null} if the wait's statement alone is rolled back
	 * @throws org.springframework.dao.DataAccessException if the database failed
	 */
	default @Nullable String lockWaitTimeoutRollsBackTransaction() {
		return null;
	}

	/**
	 * A named lock held by a connection of its own.
	 */
	interface NamedLock {

		/**
		 * Draws the key's next named-mode token on the holding connection, so that it is
		 * never given back: from a sequence, or where there is none (MySQL) from a per-key
		 * counter in autocommit (committed at once).
		 * @return the new token
		 * @throws org.springframework.dao.DataAccessException if the connection failed (the
		 * server has then freed the lock)
		 */
		long nextToken();

		/**
		 * Whether the holding connection still answers, within the statement timeout.
		 * @return whether it does
		 */
		boolean isAlive();

		/**
		 * Releases the lock and gives the connection back to the pool; a connection that
		 * failed is closed (the server frees its locks).
		 * @return whether the connection still held the lock
		 */
		boolean release();

	}

}
