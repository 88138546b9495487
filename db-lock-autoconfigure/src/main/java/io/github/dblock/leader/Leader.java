package io.github.dblock.leader;

import java.time.Instant;

/**
 * Who leads a role, as the lock table says.
 *
 * @param role the role
 * @param owner the leader's owner id in the lock table: its host, process id, a random
 * instance id and a counter ({@code host/pid/instance#n})
 * @param term the leadership's term, as {@link LeadershipGrantedEvent#term()} told the
 * leader
 * @param since when the leadership began, in the database's time
 * @param expiresAt when its lease ends unless renewed, in the database's time
 * @since 0.1.0
 */
public record Leader(String role, String owner, long term, Instant since, Instant expiresAt) {
}
