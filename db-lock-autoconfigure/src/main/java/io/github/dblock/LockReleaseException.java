package io.github.dblock;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A release that could not be confirmed: its statement failed, or its outcome is unknown
 * (a timeout, a lost reply), so the lock may still be taken in the database until its lease
 * ends. Thrown by {@link LockHandle#close()}; {@link io.github.dblock.support.DbLockTemplate#execute} and a
 * {@code @DbLock} method throw it with what the action returned, or, if the action threw,
 * add it to that exception as suppressed.
 *
 * @since 0.1.0
 */
public class LockReleaseException extends DbLockException {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final Instant takenUntil;

	private final transient @Nullable Object result;

	/**
	 * Creates an exception.
	 * @param key the stored lock key
	 * @param takenUntil when the lease ends, in the database's time: the key may stay taken
	 * until then
	 * @param cause the failure of the release
	 */
	public LockReleaseException(String key, Instant takenUntil, Throwable cause) {
		this(key, takenUntil, null, cause);
	}

	private LockReleaseException(String key, Instant takenUntil, @Nullable Object result, Throwable cause) {
		super("Could not release lock '" + key + "': it stays taken until its lease ends at " + takenUntil + " ("
				+ cause.getMessage() + ")", cause);
		this.key = key;
		this.takenUntil = takenUntil;
		this.result = result;
	}

	/**
	 * The same report, carrying what the action under the lock returned.
	 * @param result what the action returned
	 * @return a new exception
	 */
	public LockReleaseException withResult(@Nullable Object result) {
		LockReleaseException withResult = new LockReleaseException(this.key, this.takenUntil, result, getCause());
		withResult.setStackTrace(getStackTrace());
		return withResult;
	}

	/**
	 * The stored lock key.
	 * @return the key
	 */
	public String getKey() {
		return this.key;
	}

	/**
	 * When the lease ends, in the database's time: until then the key may stay taken.
	 * @return the instant
	 */
	public Instant getTakenUntil() {
		return this.takenUntil;
	}

	/**
	 * What the action under the lock returned, if it returned.
	 * @return the result, {@code null} for none or when thrown by {@link LockHandle#close()}
	 */
	public @Nullable Object getResult() {
		return this.result;
	}

}
