package io.github.dblock.leader;

import org.springframework.context.ApplicationEvent;

/**
 * Published when this application instance becomes the leader of a role, before the role's
 * {@link LeaderRole} beans are started. Every granted event of a role is followed by a
 * {@link LeadershipRevokedEvent} of the same term before the next granted event.
 *
 * @since 0.1.0
 */
public class LeadershipGrantedEvent extends ApplicationEvent {

	private static final long serialVersionUID = 1L;

	private final String role;

	private final long term;

	/**
	 * Creates the event.
	 * @param source the leaders' bean
	 * @param role the role
	 * @param term the leadership's term: the fencing token of the role's lease, larger than
	 * every earlier term of the role on any node
	 */
	public LeadershipGrantedEvent(Object source, String role, long term) {
		super(source);
		this.role = role;
		this.term = term;
	}

	/**
	 * The role this instance now leads.
	 * @return the role, as configured in {@code db-lock.leader.roles}
	 */
	public String role() {
		return this.role;
	}

	/**
	 * The term of the leadership: larger than every earlier term of the role, on any node.
	 * @return the term
	 */
	public long term() {
		return this.term;
	}

	@Override
	public String toString() {
		return "LeadershipGrantedEvent[role=" + this.role + ", term=" + this.term + "]";
	}

}
