package io.github.dblock;

import java.time.Duration;

/**
 * The lock was held by another owner for the whole time the caller was willing to wait.
 *
 * @since 0.1.0
 */
public class LockAcquisitionException extends DbLockException {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final Duration waited;

	/**
	 * Creates an exception.
	 * @param key the stored lock key
	 * @param waited how long the caller waited
	 */
	public LockAcquisitionException(String key, Duration waited) {
		super("Could not acquire lock '" + key + "' within " + LockChecks.format(waited) + ": held by another owner");
		this.key = key;
		this.waited = waited;
	}

	/**
	 * The stored lock key.
	 * @return the key
	 */
	public String getKey() {
		return this.key;
	}

	/**
	 * How long the caller waited before giving up.
	 * @return the time waited
	 */
	public Duration getWaited() {
		return this.waited;
	}

}
