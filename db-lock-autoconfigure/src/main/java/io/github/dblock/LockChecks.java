package io.github.dblock;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The rules a lock's key and times obey, in one place. {@link LockRequest} applies them to
 * every request; the template, the {@code @DbLock} start-up check and the start-up check of
 * {@code db-lock.*} properties apply them to what they are given, each naming in its message
 * where the value came from. The lock table's limit on a key's length is the engine's to
 * check, since the repository knows it.
 *
 * @since 0.1.0
 */
public final class LockChecks {

	private LockChecks() {
	}

	/**
	 * Checks a key: not {@code null}, not blank.
	 * @param key the key
	 * @return the key
	 * @throws DbLockException if it is {@code null} or blank
	 */
	public static String checkKey(@Nullable String key) {
		if (!isValidKey(key)) {
			throw new DbLockException("Lock key must not be blank, got '" + key + "'");
		}
		return key;
	}

	/**
	 * Whether a key can name a lock: not {@code null}, not blank.
	 * @param key the key
	 * @return whether valid
	 */
	public static boolean isValidKey(@Nullable String key) {
		return key != null && !key.isBlank();
	}

	/**
	 * Whether a wait is valid: zero (one attempt) or positive.
	 * @param wait the wait
	 * @return whether valid; {@code false} for {@code null}
	 */
	public static boolean isValidWait(@Nullable Duration wait) {
		return wait != null && !wait.isNegative();
	}

	/**
	 * Whether a lease is valid: positive.
	 * @param lease the lease
	 * @return whether valid; {@code false} for {@code null}
	 */
	public static boolean isValidLease(@Nullable Duration lease) {
		return lease != null && !lease.isNegative() && !lease.isZero();
	}

	/**
	 * Whether a minimum hold is valid: zero (none) or positive.
	 * @param minimumHold the minimum hold
	 * @return whether valid; {@code false} for {@code null}
	 */
	public static boolean isValidMinimumHold(@Nullable Duration minimumHold) {
		return minimumHold != null && !minimumHold.isNegative();
	}

	/**
	 * Whether a lock in a mode may have a minimum hold: only the lease mode's lease outlives
	 * its holder, so any other mode takes zero alone.
	 * @param mode the mode
	 * @param minimumHold the minimum hold
	 * @return whether allowed
	 */
	public static boolean allowsMinimumHold(DbLockMode mode, Duration minimumHold) {
		return mode == DbLockMode.LEASE || minimumHold.isZero();
	}

	/**
	 * Whether a lock in a mode may be given a lease: the modes whose holders have one
	 * ({@link DbLockMode#hasLease()}) take any; the others take none ({@code null}).
	 * @param mode the mode
	 * @param lease the lease, or {@code null} for none given
	 * @return whether allowed
	 */
	public static boolean allowsLease(DbLockMode mode, @Nullable Duration lease) {
		return lease == null || mode.hasLease();
	}

}
