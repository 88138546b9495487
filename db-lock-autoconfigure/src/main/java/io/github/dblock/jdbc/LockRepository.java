package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.Optional;

/**
 * Storage of exclusive leases. Every method runs on its own, outside any transaction of
 * the caller, and decides expiry with the database's clock.
 */
public interface LockRepository {

	/**
	 * Takes the key if it is free or its lease has expired.
	 * @param key the stored lock key, at most {@link #maxKeyLength()} characters
	 * @param owner an id unique to this acquisition
	 * @param lease how long the lease lasts from the database's now
	 * @return the lease, or empty when another owner holds the key (including a deadlock
	 * or lock-wait timeout reported by the database: an attempt that did not acquire)
	 */
	Optional<Lease> tryAcquire(String key, String owner, Duration lease);

	/**
	 * Deletes the lease if this owner still holds it with this token.
	 * @param lease the lease to end
	 * @return whether the lease was still held and is now released
	 */
	boolean release(Lease lease);

	/**
	 * The longest key the lock table holds.
	 * @return the number of characters
	 */
	int maxKeyLength();

}
