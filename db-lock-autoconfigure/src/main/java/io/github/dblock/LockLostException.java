package io.github.dblock;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * The lease of a lock was lost while the method holding it ran: another owner may have
 * run at the same time. Thrown when the method returns, per
 * {@code db-lock.on-lost-lease=throw}; carries what the method returned.
 *
 * @since 0.1.0
 */
public class LockLostException extends DbLockException {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final Instant lostSince;

	private final transient @Nullable Object result;

	/**
	 * Creates an exception.
	 * @param key the stored lock key
	 * @param lostSince when the lease was found lost
	 * @param result what the method returned
	 */
	public LockLostException(String key, Instant lostSince, @Nullable Object result) {
		this(key, lostSince, result, "another owner may have run too");
	}

	/**
	 * Creates an exception that says what followed from the loss.
	 * @param key the stored lock key
	 * @param lostSince when the lease was found lost
	 * @param result what the method returned, if it returned
	 * @param consequence what followed, for the message
	 */
	public LockLostException(String key, Instant lostSince, @Nullable Object result, String consequence) {
		super("Lock '" + key + "' was lost at " + lostSince + " while its holder ran: " + consequence);
		this.key = key;
		this.lostSince = lostSince;
		this.result = result;
	}

	/**
	 * The stored lock key.
	 * @return the key
	 */
	public String getKey() {
		return this.key;
	}

	/**
	 * When the lease was found lost.
	 * @return the instant
	 */
	public Instant getLostSince() {
		return this.lostSince;
	}

	/**
	 * What the method returned.
	 * @return the result, {@code null} for none
	 */
	public @Nullable Object getResult() {
		return this.result;
	}

}
