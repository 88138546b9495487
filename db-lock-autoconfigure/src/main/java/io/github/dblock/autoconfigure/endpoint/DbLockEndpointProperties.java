package io.github.dblock.autoconfigure.endpoint;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code dblock} actuator endpoint: {@code db-lock.endpoint.*}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("db-lock.endpoint")
public class DbLockEndpointProperties {

	/**
	 * The most rows of the lock table the endpoint's read operation lists.
	 */
	private int maxRows = 1000;

	/**
	 * The most rows listed.
	 * @return the number
	 */
	public int getMaxRows() {
		return this.maxRows;
	}

	/**
	 * Sets the most rows listed.
	 * @param maxRows the number
	 */
	public void setMaxRows(int maxRows) {
		this.maxRows = maxRows;
	}

}
