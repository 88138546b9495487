/**
 * Leader election on the lock table: each configured role is one lease, its holder the
 * role's leader, its fencing token the leader's term. {@link io.github.dblock.leader.DbLockLeaders}
 * runs the candidacies and answers who leads; {@link io.github.dblock.leader.LeaderOnly}
 * runs a method on the leader alone; {@link io.github.dblock.leader.LeaderRole} starts a
 * {@code SmartLifecycle} bean on the leader alone.
 */
@NullMarked
package io.github.dblock.leader;

import org.jspecify.annotations.NullMarked;
