package io.github.dblock;

import java.time.Duration;
import java.util.Objects;

/**
 * What a caller asks of the engine: a value whose times are checked once, here, by the
 * rules of {@link LockChecks}.
 *
 * @param key the stored key
 * @param waitTime how long to wait while another owner holds the key; zero for one attempt
 * @param lease the lease
 * @param renewed whether a watchdog renews the lease while it is held (else it ends on
 * time, even if the holder still runs)
 * @param minimumHold how long after acquisition the lock stays taken even if released
 * sooner; zero for none
 * @param mode how the lock is held; the lease and its renewal are the lease, read/write and
 * fair and semaphore modes' (the other modes have no lease), the minimum hold is the lease
 * mode's alone
 * @param permits how many holders the key has at once: the semaphore mode's number of
 * permits, 1 in every other mode
 * @since 0.1.0
 */
public record LockRequest(String key, Duration waitTime, Duration lease, boolean renewed, Duration minimumHold,
		DbLockMode mode, int permits) {

	/**
	 * Checks the request.
	 * @throws DbLockException for a blank key, a negative wait or minimum hold, a lease
	 * that is not positive, a minimum hold in a mode other than the lease mode, a number of
	 * permits below 1, or other than 1 outside the semaphore mode
	 * @throws NullPointerException for a {@code null} time or mode
	 */
	public LockRequest {
		LockChecks.checkKey(key);
		Objects.requireNonNull(waitTime, "waitTime");
		Objects.requireNonNull(lease, "lease");
		Objects.requireNonNull(minimumHold, "minimumHold");
		Objects.requireNonNull(mode, "mode");
		if (!LockChecks.isValidWait(waitTime)) {
			throw new DbLockException("Wait for lock '" + key + "' must not be negative, got " + LockChecks.format(waitTime));
		}
		if (!LockChecks.isValidLease(lease)) {
			throw new DbLockException("Lease of lock '" + key + "' must be positive, got " + LockChecks.format(lease));
		}
		if (!LockChecks.isValidMinimumHold(minimumHold)) {
			throw new DbLockException(
					"Minimum hold of lock '" + key + "' must not be negative, got " + LockChecks.format(minimumHold));
		}
		if (!LockChecks.allowsMinimumHold(mode, minimumHold)) {
			throw new DbLockException("Lock '" + key + "' in the " + mode + " mode cannot have a minimum hold ("
					+ LockChecks.format(minimumHold) + "): only a lease outlives its holder");
		}
		if (!LockChecks.allowsPermits(mode, permits)) {
			throw new DbLockException("Lock '" + key + "' in the " + mode + " mode cannot have " + permits
					+ " permits: " + LockChecks.PERMITS_RULE);
		}
	}

	/**
	 * A request with one holder at a time, in any mode but the semaphore mode (whose
	 * {@code permits} it sets to 1).
	 * @param key the stored key
	 * @param waitTime how long to wait while another owner holds the key; zero for one
	 * attempt
	 * @param lease the lease
	 * @param renewed whether a watchdog renews the lease while it is held
	 * @param minimumHold how long after acquisition the lock stays taken even if released
	 * sooner; zero for none
	 * @param mode how the lock is held
	 */
	public LockRequest(String key, Duration waitTime, Duration lease, boolean renewed, Duration minimumHold,
			DbLockMode mode) {
		this(key, waitTime, lease, renewed, minimumHold, mode, 1);
	}

	/**
	 * This request with another wait.
	 * @param wait the wait
	 * @return the request
	 */
	public LockRequest withWait(Duration wait) {
		return new LockRequest(this.key, wait, this.lease, this.renewed, this.minimumHold, this.mode, this.permits);
	}

	/**
	 * A request in the lease mode.
	 * @param key the stored key
	 * @param waitTime how long to wait while another owner holds the key; zero for one
	 * attempt
	 * @param lease the lease
	 * @param renewed whether a watchdog renews the lease while it is held
	 * @param minimumHold how long after acquisition the lock stays taken even if released
	 * sooner; zero for none
	 */
	public LockRequest(String key, Duration waitTime, Duration lease, boolean renewed, Duration minimumHold) {
		this(key, waitTime, lease, renewed, minimumHold, DbLockMode.LEASE);
	}

	/**
	 * A request with a fixed lease and no minimum hold.
	 * @param key the stored key
	 * @param wait how long to wait
	 * @param lease the lease, not renewed
	 * @return the request
	 */
	public static LockRequest of(String key, Duration wait, Duration lease) {
		return new LockRequest(key, wait, lease, false, Duration.ZERO);
	}

}
