package io.github.dblock;

/**
 * How a lock is held in the database; {@link DbLock#mode()} and the {@link io.github.dblock.support.DbLockTemplate}
 * methods that take a mode choose it. Locks of different modes never exclude each other,
 * even on the same name and key.
 *
 * @since 0.1.0
 */
public enum DbLockMode {

	/**
	 * The default: a row in the lock table with a lease in the database's time, taken and
	 * released by statements of its own outside the caller's transaction, renewed by a
	 * watchdog while held. Survives a crash of its holder until the lease runs out; needs a
	 * connection only for each statement. Released when the method returns, after the
	 * caller's transaction commits (the advisor runs outside {@code @Transactional}).
	 */
	LEASE,

	/**
	 * A row lock ({@code SELECT ... FOR UPDATE}) on the key's row of the key table, taken on
	 * the caller's own transactional connection and released by its commit or rollback: no
	 * release statement, no lease, no watchdog. Needs an active Spring transaction on
	 * db-lock's {@code DataSource} (the advisor runs inside {@code @Transactional}); a waiter
	 * holds its transaction's connection while it waits. Freed at once when the holder's
	 * connection or process dies (the server ends its transaction). Closing the handle ends
	 * nothing: the transaction does. The fencing token is drawn the first time it is read
	 * (one statement), from a sequence on the caller's connection (on MySQL, which has none,
	 * from a per-key counter on another connection, committed at once): not transactional,
	 * so that tokens strictly increase per key even when a holder rolls back or dies.
	 */
	TRANSACTION,

	/**
	 * The database server's named lock: {@code GET_LOCK}/{@code RELEASE_LOCK} on MySQL and
	 * MariaDB, {@code pg_try_advisory_lock}/{@code pg_advisory_unlock} on PostgreSQL, held by
	 * a pooled connection from acquisition to release. Freed at once when that connection
	 * or process dies; no lease, no watchdog, no rows written (the fastest mode). Threads of
	 * one JVM queue for a key locally. Not available on H2, and refused on a multi-primary
	 * cluster (Galera, group replication in multi-primary mode), whose nodes each give their
	 * own named locks. The fencing token is drawn the first time it is read, in one
	 * statement on the holding connection: from a sequence (on MySQL from a per-key counter,
	 * committed at once).
	 */
	NAMED,

	/**
	 * A shared (reader's) lock of a read/write pair: any number of readers hold a key at
	 * once, from every JVM, while no {@link #WRITE writer} holds it or waits for it. Each
	 * reader is a row of its own with its own lease in the database's time (renewed by the
	 * watchdog when no lease is given) and its own fencing token, from the lease mode's token
	 * source, so that tokens increase per key across readers and writers; a crashed reader's
	 * share ends with its lease. A thread that holds the key reads again with no statement, and
	 * a thread that holds it for writing may read it too (under its write lock); a reader that
	 * asks to write is refused ({@link LockUpgradeException}). Released when the method
	 * returns, after the caller's transaction commits.
	 */
	READ,

	/**
	 * The exclusive (writer's) lock of a read/write pair: excludes readers and other writers of
	 * the key, from every JVM. A waiting writer registers an intent (a row with a lease,
	 * renewed while it waits) that keeps new readers out, so that readers that keep coming do
	 * not starve it: the readers that hold the key finish, then the writer enters. Its lease,
	 * token and renewal are those of {@link #READ}.
	 */
	WRITE,

	/**
	 * A fair lock: waiters from every JVM are served in the order they arrived at the
	 * database, through a queue table. Each acquisition enqueues a ticket (one statement),
	 * which is its fencing token (strictly increasing per key); the holder is the head of
	 * the key's queue whose ticket has a valid lease in the database's time, and it
	 * releases by deleting its ticket. A ticket has a lease like the lease mode's
	 * ({@link DbLock#leaseMs()}, renewed by a watchdog when not given), also while it waits,
	 * so that a waiter or holder that dies leaves the queue after its lease; one that gives
	 * up (its wait ran out, or it was interrupted) deletes its ticket at once. Only the
	 * earliest waiting ticket of each JVM asks the database whether it is the head; the
	 * other threads wait locally. Refused on a multi-primary cluster, whose nodes each order
	 * their own inserts.
	 */
	FAIR,

	/**
	 * A counting semaphore: up to {@link DbLock#permits()} holders of a key at once, from
	 * every JVM. Each permit is a lease of its own in the lock table, kept as the lease
	 * mode keeps one (its own row, its own fencing token, renewed by the watchdog when no
	 * lease is given, lost-lease detection, the commit guard), under the key
	 * {@code <key>#permit-<n>} for permit {@code n} from 0: a crashed holder frees its permit
	 * when its lease ends. Threads of one JVM that wait for a permit queue locally, and one of
	 * them at a time asks the database; a permit released while others of the JVM wait wakes
	 * the next of them at once, for at most a local turn while another JVM asks too (as the
	 * lease mode passes a key). Not reentrant: a thread that holds a permit and asks again
	 * takes a second one. The number of permits is recorded per key at its first use; a
	 * request for the same key with another number fails ({@link DbLockException}).
	 */
	SEMAPHORE;

	/**
	 * Whether holders in this mode have a lease ({@link DbLock#leaseMs()} applies): the
	 * lease, read, write, fair and semaphore modes; the transaction and named modes end with
	 * their transaction or connection instead.
	 * @return whether a lease applies
	 */
	public boolean hasLease() {
		return this != TRANSACTION && this != NAMED;
	}

}
