package io.github.dblock.scheduling;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a Spring {@code @Scheduled} method at most once per slot of its schedule across
 * every node of the application that shares db-lock's database.
 * <p>
 * A slot is a nominal fire time of the method's schedule, read from its
 * {@code @Scheduled} at start-up: for {@code cron} (in its {@code zone}), the cron's fire
 * times; for {@code fixedRate} and {@code fixedDelay}, the multiples of the period since
 * the epoch (1970-01-01T00:00:00Z). At each call, before the method runs, db-lock reads the
 * database's now, takes the slot nearest to it, and claims that slot of the task in its
 * table {@code <table>_slot} (a row keyed by the task and the slot, inserted on db-lock's
 * own connection, outside the caller's transaction). The node whose insert comes first runs
 * the method; every other call mapped to the same slot returns without running it:
 * {@code null}, or for a primitive return type its zero value, with a DEBUG log.
 * <p>
 * What it promises:
 * <ul>
 * <li><b>At most once per slot</b>, whatever the nodes' clocks: the slot's row is written
 * once (the database's primary key decides).</li>
 * <li>A call whose claim fails or whose outcome is unknown (a timeout, a lost reply, the
 * database down) is taken as the worse case, a slot claimed by someone: the method does not
 * run, with a WARN log. A slot may then be run by no node.</li>
 * <li><b>The half-gap bound</b>: the calls of the nodes for one nominal fire time map to the
 * same slot, and so run once, as long as each is off from that fire time (by its clock's
 * offset from the database's, by a late start, by the scheduler's lateness) by less than
 * half the gap to the neighbouring fire times (half the period for a fixed rate or delay).
 * A node off by more can claim a neighbouring slot: each slot still runs at most once, but
 * two runs may then come closer together than the schedule's gap.</li>
 * <li>A {@code fixedRate} or {@code fixedDelay} schedule fires from each node's start, not
 * at the multiples of its period: nodes started at different phases of the period map their
 * runs to the slot nearest to each run. Use a {@code cron} schedule where the nodes should
 * agree on the fire times themselves; with {@code fixedDelay}, runs drift by their own
 * length and may skip slots.</li>
 * <li>A slot does not exclude the next one: a run longer than the gap overlaps the next
 * slot's run on another node. Add {@code @DbLock(waitMs = 0, onFailure = SKIP)} for runs
 * that must not overlap.</li>
 * <li>A slot missed by every node (all down, all failed to claim) is not run later.</li>
 * </ul>
 * Slots older than {@code db-lock.scheduling.retention} before a task's latest claimed slot
 * are deleted by that claim.
 * <p>
 * Start-up fails, naming the method, if the method has no {@code @Scheduled}, several of
 * them, a {@code @Scheduled} with more or fewer than one of {@code cron}, {@code fixedRate}
 * and {@code fixedDelay}, a cron expression or zone that does not parse, or a period that is
 * not positive.
 *
 * @since 0.1.0
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OncePerSlot {

	/**
	 * The task's name, which keys its slots in the database with the slot's time
	 * (prefixed with {@code db-lock.key-prefix}): the same on every node. Default: the
	 * declaring class's simple name, a dot and the method's name.
	 * @return the name, or empty for the default
	 */
	String name() default "";

}
