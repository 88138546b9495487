package io.github.dblock.autoconfigure;

import io.github.dblock.DbLockException;

/**
 * db-lock cannot start as configured: a property out of range, no data source to use, or
 * {@code @DbLock} methods with no lock engine to serve them. Spring Boot shows it through
 * {@link DbLockFailureAnalyzer}: what is wrong, naming the property as it was written, and
 * what to do.
 *
 * @since 0.1.0
 */
public class DbLockConfigurationException extends DbLockException {

	private final String action;

	/**
	 * Creates the exception.
	 * @param description what is wrong
	 * @param action what to do about it
	 */
	public DbLockConfigurationException(String description, String action) {
		super(description);
		this.action = action;
	}

	/**
	 * What to do about it.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}
