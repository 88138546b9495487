package io.github.dblock.actuate;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.leader.Leader;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code dblockleaders} actuator endpoint: for each configured role, who leads it (read
 * from the lock table, one statement per role), with its term and since when, and this
 * instance's candidacy.
 *
 * @since 0.1.0
 */
@Endpoint(id = "dblockleaders")
public class DbLockLeadersEndpoint {

	private final DbLockLeaders leaders;

	/**
	 * Creates the endpoint.
	 * @param leaders the leader election
	 */
	public DbLockLeadersEndpoint(DbLockLeaders leaders) {
		this.leaders = leaders;
	}

	/**
	 * Each role's leader and this instance's part in its election.
	 * @return the report
	 */
	@ReadOperation
	public LeadersReport leaders() {
		List<RoleReport> roles = new ArrayList<>();
		for (String role : this.leaders.roles()) {
			Optional<Leader> leader = this.leaders.leader(role);
			roles.add(new RoleReport(role, leader.map(Leader::owner).orElse(null),
					leader.map(Leader::term).orElse(null), leader.map(Leader::since).orElse(null),
					leader.map(Leader::expiresAt).orElse(null), this.leaders.isLeader(role),
					this.leaders.isCandidate(role)));
		}
		return new LeadersReport(List.copyOf(roles), this.leaders.lease().toString(),
				this.leaders.pollInterval().toString());
	}

	/**
	 * The endpoint's answer.
	 * @param roles each configured role
	 * @param lease the leaders' lease ({@code db-lock.leader.lease}), ISO-8601
	 * @param pollInterval how often candidates try ({@code db-lock.leader.poll-interval}),
	 * ISO-8601
	 */
	public record LeadersReport(List<RoleReport> roles, String lease, String pollInterval)
			implements OperationResponseBody {
	}

	/**
	 * One role.
	 * @param role the role
	 * @param leader the leader's owner id in the lock table ({@code host/pid/instance#n}), or
	 * {@code null} if none leads
	 * @param term the leader's term, or {@code null}
	 * @param since when the leadership began, in the database's time, or {@code null}
	 * @param expiresAt when the leader's lease ends unless renewed, in the database's time,
	 * or {@code null}
	 * @param thisInstanceLeads whether this instance leads the role
	 * @param thisInstanceIsCandidate whether this instance takes part in the election
	 * (started and not stopped)
	 */
	public record RoleReport(String role, @Nullable String leader, @Nullable Long term, @Nullable Instant since,
			@Nullable Instant expiresAt, boolean thisInstanceLeads, boolean thisInstanceIsCandidate) {
	}

}
