package io.github.dblock.jdbc.dialect;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * What a database server is set up to do, as far as locks depend on it, read from the
 * server with statements of its own (each in autocommit): whether it can hold the lock
 * table, whether it is one node of a multi-primary cluster, what a failover or a lock-wait
 * timeout does. Asked at start-up and when a mode asks whether it can run; every method
 * returns {@code null} where there is nothing to report. This class finds nothing but the
 * absence of named locks; a database with more to tell extends it.
 *
 * @since 0.1.0
 */
public class ServerInspection {

	private final String database;

	/**
	 * Creates the inspection of a database's servers.
	 * @param database the database's name, for messages
	 */
	public ServerInspection(String database) {
		this.database = database;
	}

	/**
	 * What makes this server a node of a multi-primary cluster, if it is one: there, a row
	 * lock or a named lock is local to the node that gave it (the nodes reconcile writes only
	 * at commit), so the transaction and named modes would let callers on different nodes
	 * in at once.
	 * @param jdbc runs statements in autocommit
	 * @return what shows it, or {@code null} if it is not one
	 */
	public @Nullable String multiPrimaryCluster(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * What makes a lock-wait timeout roll back the whole transaction of the caller on this
	 * server, if it does: a transaction-mode wait that runs out then ends the caller's
	 * transaction, and the call fails, never retried.
	 * @param jdbc runs statements in autocommit
	 * @return what shows it, or {@code null} if a timeout rolls back the statement alone
	 */
	public @Nullable String lockWaitTimeoutRollsBackTransaction(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why this server cannot hold the lock table, if it cannot: it is read-only, as a
	 * replica or a standby is. Locks written on a replica are not the primary's.
	 * @param jdbc runs statements in autocommit
	 * @return the reason, or {@code null} if it can
	 */
	public @Nullable String readOnly(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why this server's reads may miss writes committed on another node of its cluster, if
	 * they may: a release sent to one member can then miss the row an acquisition wrote
	 * through another a moment before.
	 * @param jdbc runs statements in autocommit
	 * @return the reason, or {@code null}
	 */
	public @Nullable String staleClusterReads(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why this server may give a key's fencing tokens out of order, if it may.
	 * @param jdbc runs statements in autocommit
	 * @return the warning, or {@code null}
	 */
	public @Nullable String tokenOrderWarning(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * What a failover of this server could lose, if anything is known to.
	 * @param jdbc runs statements in autocommit
	 * @return the warning, or {@code null}
	 */
	public @Nullable String failoverWarning(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why named locks cannot be used on this database or server, if they cannot.
	 * @param jdbc runs statements in autocommit
	 * @return the reason, or {@code null} if they can; here always a reason
	 */
	public @Nullable String namedLocksUnavailable(JdbcOperations jdbc) {
		return "named locks (GET_LOCK, pg_advisory_lock) are not available on " + this.database;
	}

}
