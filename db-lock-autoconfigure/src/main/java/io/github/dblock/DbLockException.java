package io.github.dblock;

/**
 * Base of db-lock's exceptions: bad input, a database that cannot be reached, a lock that
 * could not be taken.
 *
 * @since 0.1.0
 */
public class DbLockException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what went wrong, naming the key or method
	 */
	public DbLockException(String message) {
		super(message);
	}

	/**
	 * Creates an exception with a cause.
	 * @param message what went wrong, naming the key or method
	 * @param cause the cause
	 */
	public DbLockException(String message, Throwable cause) {
		super(message, cause);
	}

}
