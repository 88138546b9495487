package io.github.dblock.autoconfigure.metrics;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * db-lock's Micrometer meters: {@code db-lock.metrics.*}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("db-lock.metrics")
public class DbLockMetricsProperties {

	/**
	 * Whether to publish db-lock's meters (db.lock.acquire, db.lock.held, ...) where
	 * Micrometer is on the classpath.
	 */
	private boolean enabled = true;

	/**
	 * The most distinct values of the meters' name tag; locks of further names are tagged
	 * "other".
	 */
	private int maxNames = 100;

	/**
	 * Whether the meters are published.
	 * @return whether enabled
	 */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Sets whether the meters are published.
	 * @param enabled whether enabled
	 */
	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	/**
	 * The most distinct name tags.
	 * @return the number
	 */
	public int getMaxNames() {
		return this.maxNames;
	}

	/**
	 * Sets the most distinct name tags.
	 * @param maxNames the number
	 */
	public void setMaxNames(int maxNames) {
		this.maxNames = maxNames;
	}

}
