package io.github.dblock;

import java.time.Instant;
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
 */
public interface LockHandle extends AutoCloseable {

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
	 * The end of the lease, in the database's time.
	 * @return the instant the lease expires unless released or renewed before
	 */
	Instant expiresAt();

	/**
	 * Whether this handle still holds the lock: not closed, and the lease not lost.
	 * @return whether held
	 */
	boolean isHeld();

	/**
	 * When the lease was found lost: taken over by another owner after it expired, its row
	 * deleted, or the database unreachable until it ended. A lost lease is also logged at
	 * ERROR, and {@code @DbLock} reports it per {@code db-lock.on-lost-lease}.
	 * @return the instant it was found lost, or empty while held or after a normal release
	 */
	Optional<Instant> lostSince();

	/**
	 * Releases the lock, or counts one reentrant hold down. By default the lock's row is
	 * deleted by a background thread a moment later, together with other released locks'
	 * (threads of this application can take the lock at once; see
	 * {@code db-lock.release.background}); a lease that may have ended is released before
	 * this method returns, so that its loss is reported. Never throws for a database
	 * failure: the lease then ends at {@link #expiresAt()}, and the failure is logged.
	 */
	@Override
	void close();

}
