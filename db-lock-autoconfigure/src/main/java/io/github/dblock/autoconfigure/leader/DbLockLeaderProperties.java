package io.github.dblock.autoconfigure.leader;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * db-lock's leader election: {@code db-lock.leader.*}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("db-lock.leader")
public class DbLockLeaderProperties {

	/**
	 * Roles this instance is a candidate for, each one election; the leader of a role holds
	 * the lease of the key "leader:<role>" (after the key prefix).
	 */
	private List<String> roles = new ArrayList<>();

	/**
	 * Lease of a leadership, renewed while the leader runs. A leader killed without a word
	 * is replaced after it, plus one poll interval; a leader that cannot renew it steps down
	 * with a quarter of it left.
	 */
	private Duration lease = Duration.ofSeconds(10);

	/**
	 * How often a candidate tries to take a role nobody leads: one statement per role and
	 * interval on every instance. A leader that stops or yields is replaced within it.
	 */
	private Duration pollInterval = Duration.ofMillis(500);

	/**
	 * The roles.
	 * @return the roles
	 */
	public List<String> getRoles() {
		return this.roles;
	}

	/**
	 * Sets the roles.
	 * @param roles the roles
	 */
	public void setRoles(List<String> roles) {
		this.roles = roles;
	}

	/**
	 * The lease of a leadership.
	 * @return the lease
	 */
	public Duration getLease() {
		return this.lease;
	}

	/**
	 * Sets the lease of a leadership.
	 * @param lease the lease
	 */
	public void setLease(Duration lease) {
		this.lease = lease;
	}

	/**
	 * How often a candidate tries to take a role.
	 * @return the interval
	 */
	public Duration getPollInterval() {
		return this.pollInterval;
	}

	/**
	 * Sets how often a candidate tries to take a role.
	 * @param pollInterval the interval
	 */
	public void setPollInterval(Duration pollInterval) {
		this.pollInterval = pollInterval;
	}

}
