package io.github.dblock.leader;

import org.springframework.context.ApplicationEvent;

/**
 * Published when this application instance stops leading a role, for any reason (see
 * {@link Reason}), after {@link DbLockLeaders#isLeader(String)} says {@code false} and
 * before the role's {@link LeaderRole} beans are stopped and its lease is released. When
 * the lease could not be renewed, it is published while a quarter of the lease is still
 * left on the local clock, so before another node can take the role (unless the listeners
 * or the role's beans take longer than that to return).
 *
 * @since 0.1.0
 */
public class LeadershipRevokedEvent extends ApplicationEvent {

	private static final long serialVersionUID = 1L;

	private final String role;

	private final long term;

	private final Reason reason;

	/**
	 * Creates the event.
	 * @param source the leaders' bean
	 * @param role the role
	 * @param term the term that ends
	 * @param reason why it ends
	 */
	public LeadershipRevokedEvent(Object source, String role, long term, Reason reason) {
		super(source);
		this.role = role;
		this.term = term;
		this.reason = reason;
	}

	/**
	 * The role this instance no longer leads.
	 * @return the role, as configured in {@code db-lock.leader.roles}
	 */
	public String role() {
		return this.role;
	}

	/**
	 * The term that ends: the one of the {@link LeadershipGrantedEvent} before.
	 * @return the term
	 */
	public long term() {
		return this.term;
	}

	/**
	 * Why the leadership ends.
	 * @return the reason
	 */
	public Reason reason() {
		return this.reason;
	}

	@Override
	public String toString() {
		return "LeadershipRevokedEvent[role=" + this.role + ", term=" + this.term + ", reason=" + this.reason + "]";
	}

	/**
	 * Why a leadership ends.
	 */
	public enum Reason {

		/** {@link DbLockLeaders#yield(String)} was called. */
		YIELDED,

		/**
		 * The lease was not renewed in time (the database unreachable or slow, the row taken
		 * over or deleted): stepped down while a quarter of the lease was left.
		 */
		LOST,

		/** The application is stopping (its context closes). */
		STOPPED

	}

}
