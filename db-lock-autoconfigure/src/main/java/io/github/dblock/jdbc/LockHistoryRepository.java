package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The lock log's storage: one row per hold a JVM took in the database (the table
 * {@code <table>_history}), closed with how it ended, and the maintenance steps that close
 * the rows of holders that could not (a crashed JVM's, a recovered lock's) and delete old
 * rows.
 *
 * @since 0.1.0
 */
public interface LockHistoryRepository {

	/** How a hold ended, as the log's {@code outcome} column spells it (lowercase). */
	enum Outcome {

		/** Its holder ended it. */
		RELEASED,

		/** Its lease ran out before its holder ended it (a crashed or stalled holder). */
		EXPIRED,

		/** Its holder found it gone while it held it. */
		LOST,

		/** The recovery job freed it, held longer than {@code db-lock.recovery.max-hold}. */
		RECOVERED

	}

	/**
	 * A hold to write or to close.
	 * @param key the stored key
	 * @param mode the mode's name, e.g. {@code LEASE}
	 * @param owner the acquisition's owner id, unique per acquisition
	 * @param token its fencing token, or {@code null} if none was known when it began (the
	 * transaction and named modes draw theirs only when read)
	 * @param acquiredAt when it began, by the writing JVM's clock
	 * @param releasedAt when it ended, or {@code null} while it is held
	 * @param outcome how it ended, or {@code null} while it is held
	 */
	record Entry(String key, String mode, String owner, @Nullable Long token, Instant acquiredAt,
			@Nullable Instant releasedAt, @Nullable Outcome outcome) {
	}

	/**
	 * Writes holds that began (with their end, if they ended before being written) and then
	 * closes holds written before, in one batch of each.
	 * @param started the new rows
	 * @param ended the ends of holds written earlier: key, owner, end and outcome are read
	 */
	void write(List<Entry> started, List<Entry> ended);

	/**
	 * Closes, as {@link Outcome#EXPIRED}, the open rows of holds kept as rows (the lease and
	 * read/write modes) whose row has expired, and those whose row is gone (taken over or
	 * reaped) and which began before {@code settledBefore}: long enough ago that a live holder
	 * would have written its own end.
	 * @param settledBefore the oldest start a row without a hold row may have to be closed
	 * @param now the end written
	 * @return the rows closed
	 */
	int closeExpired(Instant settledBefore, Instant now);

	/**
	 * Frees, in one transaction per table, up to {@code limit} holds of each table of holds
	 * (the lease and read/write modes') taken longer than {@code maxHold} ago by the
	 * database's clock, and closes their log rows as {@link Outcome#RECOVERED}. The rows are
	 * locked first, so that a holder's release waits for the transaction, and then finds its
	 * row gone. A freed writer's intent goes with it.
	 * @param maxHold the longest a hold may last
	 * @param limit the most holds freed per table
	 * @param now the end written in the log
	 * @return the holds freed: key, owner and token
	 */
	List<Lease> recover(Duration maxHold, int limit, Instant now);

	/**
	 * Deletes up to {@code limit} rows of the log that began before {@code before}.
	 * @param before the oldest start kept
	 * @param limit the most rows deleted
	 * @return the rows deleted
	 */
	int deleteOlderThan(Instant before, int limit);

	/**
	 * Reads the entries of the holds that began last (by their {@code acquiredAt}), the
	 * latest first, open or closed: for monitoring.
	 * @param limit the most entries to read
	 * @return the entries, with the mode's name as written (e.g. {@code LEASE})
	 * @throws UnsupportedOperationException if this repository cannot read its log
	 */
	default List<Entry> latest(int limit) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot read the lock log");
	}

}
