package io.github.dblock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A lock held by the current caller. Closing it releases the lock (or, for a reentrant
 * acquisition, counts one hold down); closing it again does nothing.
 *
 * <pre class="code">
 * try (LockHandle lock = template.acquire("order:42", Duration.ofSeconds(3), Duration.ofSeconds(30))) {
 *     repository.save(order.withFence(lock.fencingToken()));
 * }
 * </pre>
 *
 * @since 0.1.0
 */
public interface LockHandle extends AutoCloseable {

	/** What {@link #remaining()} says of a held lock that has no lease. */
	Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

	/**
	 * The stored key, with the configured prefix.
	 * @return the key
	 */
	String key();

	/**
	 * The fencing token of this acquisition: larger than the token of every earlier
	 * acquisition of the same key, on any node, so that a resource can refuse writes from
	 * an older holder. Its value has no other meaning (it is the lock table's token
	 * followed by 16 bits counting local hand-offs).
	 * @return the token
	 */
	long fencingToken();

	/**
	 * The keys this handle holds: its {@link #key()} alone, or, for a handle of several
	 * keys ({@link io.github.dblock.support.DbLockTemplate#acquireAll}), each of them in the
	 * order they were taken.
	 * @return the stored keys, at least one
	 */
	default List<String> keys() {
		return List.of(key());
	}

	/**
	 * The fencing token of one of the keys this handle holds ({@link #keys()}).
	 * @param key a stored key of {@link #keys()}
	 * @return its token, as {@link #fencingToken()} is for a handle of one key
	 * @throws IllegalArgumentException if this handle does not hold that key
	 */
	default long fencingToken(String key) {
		if (!key().equals(key)) {
			throw new IllegalArgumentException("This handle holds '" + key() + "', not '" + key + "'");
		}
		return fencingToken();
	}

	/**
	 * The end of the lease, in the database's time.
	 * @return the instant the lease expires unless released or renewed before
	 */
	Instant expiresAt();

	/**
	 * Whether this handle still holds the lock: not closed, the lease not found lost, and
	 * its time not over on the local clock (the time the statement that took or last
	 * renewed it was sent, plus the lease). Never waits for I/O: a fixed lease says
	 * {@code false} from the moment it may have ended, whether or not another owner has
	 * taken the key since.
	 * @return whether held
	 */
	boolean isHeld();

	/**
	 * How long this handle stays held by {@link #isHeld()}'s rule if its lease is not renewed
	 * meanwhile: the time left to the lease's end on the local clock (from the time the
	 * statement that took or last renewed it was sent). Never waits for I/O.
	 * @return the time left; {@link Duration#ZERO} once not held; for a lock without a lease
	 * (the transaction and named modes), a duration longer than any lease while held
	 * @since 0.1.0
	 */
	default Duration remaining() {
		return isHeld() ? FOREVER : Duration.ZERO;
	}

	/**
	 * When the lease was lost while this handle's acquisition held it: found taken over by
	 * another owner or deleted, not renewed before it ended, or its time over on the local
	 * clock before it was released (then the instant it ended). A lease found lost is also
	 * logged at ERROR, and {@code @DbLock} reports it per {@code db-lock.on-lost-lease}.
	 * @return the instant it was lost, or empty while held or after a release in time
	 */
	Optional<Instant> lostSince();

	/**
	 * Releases the lock, or counts one reentrant hold down. When this returns, the lock's
	 * row is deleted and the delete committed, so that another node finds the key free,
	 * unless a thread of this application was already waiting for the key: it then gets
	 * the lease directly (within a bounded local turn). Inside a transaction the release
	 * waits for the transaction to complete (commit or rollback), so that the next holder
	 * sees what was written under the lock. A release that could not be confirmed (its
	 * statement failed, or its outcome is unknown) throws {@link LockReleaseException}: the
	 * key may stay taken until the lease ends at {@link #expiresAt()}. (A release deferred to
	 * the end of a transaction reports it to the transaction's completion, which logs it.)
	 * @throws LockReleaseException if the release could not be confirmed; the handle is
	 * closed all the same
	 */
	@Override
	void close();

}
