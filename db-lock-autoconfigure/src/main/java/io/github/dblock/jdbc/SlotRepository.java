package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * Storage of the scheduled jobs' slots ({@code @OncePerSlot}): one record per slot of a
 * task, whose first writer is the one node that runs it. Every method runs on its own,
 * outside any transaction of the caller, on the database's clock.
 *
 * @since 0.1.0
 */
public interface SlotRepository {

	/**
	 * Reads the database's now, turns it into a slot with {@code slotAt}, and claims that
	 * slot of the task for {@code owner} unless it is claimed already; a claim that won
	 * deletes the task's slots older than {@code retention} before the claimed one (a
	 * failure of that deletion is logged, not thrown).
	 * @param task the task, at most {@link #maxTaskLength()} characters
	 * @param owner who claims, for the record
	 * @param slotAt the slot of a time of the database's clock
	 * @param retention how long before the claimed slot its task's older slots are kept
	 * @return the claim: the database's now, the slot, and whether this call claimed it
	 * @throws org.springframework.dao.DataAccessException if the database failed: whether
	 * the claim was written is unknown
	 */
	SlotClaim claim(String task, String owner, UnaryOperator<Instant> slotAt, Duration retention);

	/**
	 * A task's claimed slots, the latest first, for monitoring.
	 * @param task the task
	 * @param limit the most slots to read
	 * @return the slots
	 */
	List<ClaimedSlot> claims(String task, int limit);

	/**
	 * Why slots cannot be claimed here, if they cannot: the slot table cannot be read.
	 * @return the reason, or {@code null} if they can
	 */
	@Nullable String unavailable();

	/**
	 * The longest task name the slot table holds.
	 * @return the number of characters
	 */
	int maxTaskLength();

	/**
	 * One claimed slot.
	 * @param slotAt the slot
	 * @param owner who claimed it
	 * @param claimedAt when, on the database's clock
	 */
	record ClaimedSlot(Instant slotAt, String owner, Instant claimedAt) {
	}

}
