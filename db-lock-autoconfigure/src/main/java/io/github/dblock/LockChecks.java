package io.github.dblock;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The rules a lock's key and times obey, in one place. {@link LockRequest} applies them to
 * every request; the template, the {@code @DbLock} start-up check and the start-up check of
 * {@code db-lock.*} properties apply them to what they are given, each naming in its message
 * where the value came from, and every message that shows a time writes it with
 * {@link #format(Duration)}. The lock table's limit on a key's length is the engine's to
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

	/** What {@link #allowsSeveralKeys} allows, for messages. */
	public static final String SEVERAL_KEYS_RULE = "several keys are taken together in every mode but TRANSACTION (whose "
			+ "row locks end with the transaction alone, so that a partial acquisition could not be given back) and "
			+ "SEMAPHORE (whose permits have keys of their own)";

	/**
	 * Whether keys of a mode can be taken together, all or none.
	 * @param mode the mode
	 * @return whether they can
	 */
	public static boolean allowsSeveralKeys(DbLockMode mode) {
		return mode != DbLockMode.TRANSACTION && mode != DbLockMode.SEMAPHORE;
	}

	/** What {@link #allowsPermits} allows, for messages. */
	public static final String PERMITS_RULE = "a semaphore has at least 1 permit, and every other mode exactly 1";

	/**
	 * Whether a lock in a mode may have a number of holders at once: the semaphore mode at
	 * least 1, every other mode exactly 1.
	 * @param mode the mode
	 * @param permits the number of permits
	 * @return whether allowed
	 */
	public static boolean allowsPermits(DbLockMode mode, int permits) {
		return (mode == DbLockMode.SEMAPHORE) ? permits >= 1 : permits == 1;
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

	/**
	 * Writes a duration as a person writes it, for messages: the largest units first, with
	 * seconds to the millisecond ({@code 2s}, {@code 1.5s}, {@code 1m30s}, {@code 1h},
	 * {@code 2d12h}); below one second in milliseconds ({@code 667ms}); below one
	 * millisecond in microseconds or nanoseconds ({@code 250us}, {@code 40ns}). Values are
	 * rounded to the unit shown; zero is {@code 0s}, a negative duration has a leading
	 * {@code -}.
	 * @param duration the duration
	 * @return the text, such as {@code 667ms}
	 */
	public static String format(Duration duration) {
		if (duration.isNegative()) {
			return "-" + format(duration.negated());
		}
		long seconds = duration.getSeconds();
		int nanos = duration.getNano();
		if (seconds == 0 && nanos < 1_000_000) {
			if (nanos == 0) {
				return "0s";
			}
			if (nanos < 1_000) {
				return nanos + "ns";
			}
			long micros = (nanos + 500) / 1_000;
			return (micros < 1_000) ? micros + "us" : "1ms";
		}
		long millis = (nanos + 500_000) / 1_000_000;
		if (millis == 1_000) {
			seconds++;
			millis = 0;
		}
		if (seconds == 0) {
			return millis + "ms";
		}
		StringBuilder text = new StringBuilder();
		appendUnit(text, seconds / 86_400, "d");
		appendUnit(text, seconds % 86_400 / 3_600, "h");
		appendUnit(text, seconds % 3_600 / 60, "m");
		long secondsOfMinute = seconds % 60;
		if (millis != 0) {
			String fraction = Long.toString(1_000 + millis).substring(1).replaceAll("0+$", "");
			text.append(secondsOfMinute).append('.').append(fraction).append('s');
		}
		else {
			appendUnit(text, secondsOfMinute, "s");
		}
		return text.toString();
	}

	private static void appendUnit(StringBuilder text, long amount, String unit) {
		if (amount != 0) {
			text.append(amount).append(unit);
		}
	}

}
