package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Storage of exclusive leases. Every method runs on its own, outside any transaction of
 * the caller, and decides expiry with the database's clock.
 *
 * @since 0.1.0
 */
public interface LockRepository {

	/**
	 * Takes the key if it is free or its lease has expired.
	 * @param key the stored lock key, at most {@link #maxKeyLength()} characters
	 * @param owner an id unique to this acquisition
	 * @param lease how long the lease lasts from the database's now
	 * @return the lease, or empty when another owner holds the key (including a deadlock
	 * or lock-wait timeout reported by the database: an attempt that did not acquire)
	 * and then marks the key as wanted, with the database's now, for {@link #cede}
	 */
	Optional<Lease> tryAcquire(String key, String owner, Duration lease);

	/**
	 * Ends the lease if this owner still holds it with this token and another owner asked
	 * for the key, with {@link #tryAcquire}, less than {@code wantedWithin} ago by the
	 * database's clock; else leaves it as it is.
	 * @param lease the lease to end
	 * @param wantedWithin how recent the other owner's attempt must be
	 * @return whether the lease was ended
	 */
	boolean cede(Lease lease, Duration wantedWithin);

	/**
	 * Ends the lease if this owner still holds it with this token: at once, or, while
	 * {@code minimumHold} since acquisition has not passed, when it has.
	 * @param lease the lease to end
	 * @param minimumHold how long after acquisition the lock stays taken; zero for none
	 * @return whether the lease was still held by this owner
	 */
	boolean release(Lease lease, Duration minimumHold);

	/**
	 * Ends leases at once, each if its owner still holds it with its token, in as few
	 * statements as the database allows. Keys are distinct.
	 * @param leases the leases to end
	 * @return how many were still held by their owner
	 */
	default int releaseAll(List<Lease> leases) {
		int held = 0;
		for (Lease lease : leases) {
			if (release(lease, Duration.ZERO)) {
				held++;
			}
		}
		return held;
	}

	/**
	 * Extends the lease, if this owner still holds it with this token, to {@code duration}
	 * from the database's now.
	 * @param lease the lease to extend
	 * @param duration the lease from now
	 * @return the lease's new end, or empty if it is no longer this owner's
	 */
	Optional<Instant> renew(Lease lease, Duration duration);

	/**
	 * Extends leases, each if its owner still holds it with its token, to {@code duration}
	 * from the database's now, in as few statements as the database allows.
	 * @param leases the leases, with distinct owners
	 * @param duration the lease from now
	 * @return for each lease, in order, its new end, or empty if it is no longer its owner's
	 */
	default List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration) {
		List<Optional<Instant>> renewed = new java.util.ArrayList<>(leases.size());
		for (Lease lease : leases) {
			renewed.add(renew(lease, duration));
		}
		return renewed;
	}

	/**
	 * Extends the lease as {@link #renew(Lease, Duration)} does, and for a
	 * {@code newHolder} sets its start ({@code acquired_at}) to the database's now too:
	 * for a lease this JVM passed to another of its threads, so that the recovery job's
	 * limit on a hold's length ({@code db-lock.recovery.max-hold}) measures the current
	 * holder. The default ignores {@code newHolder}, for a repository whose holds are never
	 * freed for their length.
	 * @param lease the lease to extend
	 * @param duration the lease from now
	 * @param newHolder whether the lease's start is set to the database's now too
	 * @return the lease's new end, or empty if it is no longer this owner's
	 */
	default Optional<Instant> renew(Lease lease, Duration duration, boolean newHolder) {
		return renew(lease, duration);
	}

	/**
	 * Extends leases as {@link #renewAll(List, Duration)} does, and for {@code newHolder}
	 * sets their start to the database's now too, as {@link #renew(Lease, Duration, boolean)}
	 * does. The default ignores {@code newHolder}.
	 * @param leases the leases, with distinct owners
	 * @param duration the lease from now
	 * @param newHolder whether the leases' start is set to the database's now too
	 * @return for each lease, in order, its new end, or empty if it is no longer its owner's
	 */
	default List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration, boolean newHolder) {
		return renewAll(leases, duration);
	}

	/**
	 * Deletes the row an attempt of {@link #tryAcquire} may have written, found by the
	 * attempt's owner id (which no other attempt has): for an attempt that failed without
	 * knowing whether the database committed it.
	 * @param key the key
	 * @param owner the attempt's owner id
	 * @return whether there was such a row
	 */
	default boolean abandon(String key, String owner) {
		return false;
	}

	/**
	 * Deletes the rows attempts of {@link #tryAcquire} may have written, found by their owner
	 * ids, in as few statements as the database allows: for attempts that failed without
	 * knowing whether the database committed them, whose statements may still commit.
	 * @param keysByOwner each attempt's key, by its owner id
	 * @return how many rows were deleted
	 */
	default int abandonAll(Map<String, String> keysByOwner) {
		int deleted = 0;
		for (Map.Entry<String, String> attempt : keysByOwner.entrySet()) {
			if (abandon(attempt.getValue(), attempt.getKey())) {
				deleted++;
			}
		}
		return deleted;
	}

	/**
	 * Deletes rows whose lease has ended, never one renewed a moment ago.
	 * @param limit the most rows to delete
	 * @return the number deleted
	 */
	int deleteExpired(int limit);

	/**
	 * Reads rows of the lock table, in key order, for monitoring: whoever holds them, expired
	 * or not.
	 * @param limit the most rows to read
	 * @return the rows
	 * @throws UnsupportedOperationException if this repository cannot list its rows
	 */
	default List<LockRow> rows(int limit) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot list the rows of its lock table");
	}

	/**
	 * Reads the row of one key whose lease has not ended by the database's clock, whoever
	 * holds it: who leads a role ({@code io.github.dblock.leader.DbLockLeaders#leader}).
	 * @param key the stored key
	 * @return the row, or empty if no lease of that key is valid now
	 * @throws UnsupportedOperationException if this repository cannot read its rows
	 */
	default Optional<LockRow> validRow(String key) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot read the rows of its lock table");
	}

	/**
	 * Reads the database's clock, for monitoring (the health's clock offset).
	 * @return the database's now
	 * @throws UnsupportedOperationException if this repository cannot read it
	 */
	default Instant databaseTime() {
		throw new UnsupportedOperationException(getClass().getName() + " cannot read the database's clock");
	}

	/**
	 * The storage of the read/write modes on the same database, if this repository has one.
	 * @return the read/write storage, or empty
	 */
	default Optional<ReadWriteLockRepository> readWriteLocks() {
		return Optional.empty();
	}

	/**
	 * The keys released while another owner wanted them, told by the database as the
	 * releases commit, if its database tells them (PostgreSQL) and they were not turned off:
	 * a lease-mode waiter then asks again at once instead of at the end of its back-off, and
	 * so does a fair-mode waiter whose key's head left the queue (the fair queue's trigger
	 * notifies the same channel). An
	 * engine asks once, when it is built. A repository that wraps another delegates it, or
	 * its engine's waiters poll alone.
	 * @return a new feed, with no connection yet, or empty
	 */
	default Optional<ReleaseFeed> releaseFeed() {
		return Optional.empty();
	}

	/**
	 * The fair mode's queue beside this repository's lock table, if it has one.
	 * @return the queue, or empty if this repository has none
	 */
	default Optional<FairLockRepository> fairQueue() {
		return Optional.empty();
	}

	/**
	 * The number of permits of a semaphore's key ({@link io.github.dblock.DbLockMode#SEMAPHORE}),
	 * recorded by the first caller that uses the key, so that callers on every node that ask
	 * for another number are refused. The default records nothing and returns
	 * {@code permits}: a repository without a record checks the number within one JVM alone.
	 * @param key the semaphore's stored key
	 * @param permits the number this caller asks for
	 * @return the number recorded for the key, which this caller's number is checked against
	 */
	default int recordPermits(String key, int permits) {
		return permits;
	}

	/**
	 * Why the semaphore mode cannot be used here, if it cannot: the table in which
	 * {@link #recordPermits} records the numbers of permits cannot be read. The default says
	 * it can.
	 * @return the reason, or {@code null} if it can be used
	 */
	default @Nullable String semaphoresUnavailable() {
		return null;
	}

	/**
	 * The longest key the lock table holds.
	 * @return the number of characters
	 */
	int maxKeyLength();

}
