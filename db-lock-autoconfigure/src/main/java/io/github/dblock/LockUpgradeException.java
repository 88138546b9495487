package io.github.dblock;

/**
 * A thread that holds a key for {@linkplain DbLockMode#READ reading} asked for it in the
 * {@linkplain DbLockMode#WRITE write mode}: refused at once, as the writer would wait for its
 * own read lock to end (an upgrade deadlock). Release the read lock first, or take the write
 * lock from the start (a writer may read under its write lock).
 *
 * @since 0.1.0
 */
public class LockUpgradeException extends DbLockException {

	private static final long serialVersionUID = 1L;

	private final String key;

	/**
	 * Creates an exception.
	 * @param key the stored lock key
	 */
	public LockUpgradeException(String key) {
		super("Lock '" + key + "' is held by this thread for reading; it cannot be taken for writing until that read "
				+ "lock is released (a read lock is never upgraded: the writer would wait for itself). Release the "
				+ "read lock first, or take the write lock from the start");
		this.key = key;
	}

	/**
	 * The key asked for.
	 * @return the stored lock key
	 */
	public String getKey() {
		return this.key;
	}

}
