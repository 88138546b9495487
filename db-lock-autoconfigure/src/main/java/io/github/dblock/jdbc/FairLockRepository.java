package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Storage of the fair mode: a queue table of tickets in arrival order. The ticket number is
 * the fencing token, strictly increasing per key; the head of a key's queue (its lowest
 * ticket whose lease has not ended in the database's time) holds the key. Every method runs
 * on its own, outside any transaction of the caller, and decides expiry with the database's
 * clock.
 *
 * @since 0.1.0
 */
public interface FairLockRepository {

	/**
	 * Puts a ticket at the back of a key's queue, with a lease from the database's now. A
	 * key's tickets are numbered in the order they become visible: one enqueued after
	 * another committed has a larger number.
	 * @param key the stored key
	 * @param owner an id unique to this acquisition
	 * @param lease how long the ticket lasts unless renewed
	 * @return the ticket
	 * @throws org.springframework.dao.DataAccessException if the database failed (the
	 * ticket may then have been written: see {@link #abandon})
	 */
	Ticket enqueue(String key, String owner, Duration lease);

	/**
	 * Enqueues a ticket as {@link #enqueue} does and, where the database allows it in the
	 * same round trip, looks at the head as {@link #head} would right after it: the ticket's
	 * insert commits with the look, which sees every ticket enqueued before it. By default
	 * it does not look.
	 * @param key the stored key
	 * @param owner an id unique to this acquisition
	 * @param lease how long the ticket lasts unless renewed
	 * @return the ticket, and the head as {@link #head} gives it, or {@link Enqueued#NOT_LOOKED}
	 * @throws org.springframework.dao.DataAccessException if the database failed (the
	 * ticket may then have been written: see {@link #abandon})
	 */
	default Enqueued enqueueAndLook(String key, String owner, Duration lease) {
		return new Enqueued(enqueue(key, owner, lease), Enqueued.NOT_LOOKED);
	}

	/**
	 * The head of a ticket's queue as far as this ticket, by the database's clock: the first
	 * ticket up to this one. An earlier ticket whose lease has ended is not passed over
	 * unless it is gone from the queue for good: a renewal of it that the database checked
	 * before its lease ended, and that commits later, makes it valid again, so it is
	 * deleted first, in a statement that waits for such a renewal (and fails to delete it
	 * if the renewal committed).
	 * @param ticket the ticket
	 * @return the head's number: this ticket's own if it holds the key, an earlier one's if
	 * it waits, or 0 if it is gone (deleted, or its lease ended)
	 */
	long head(Ticket ticket);

	/**
	 * The first ticket after this one in its key's queue, if both are in the queue with
	 * their leases not ended by the database's clock. A ticket enqueued
	 * before this call starts is seen if it is still in the queue, and so is every ticket
	 * with a lower number than it: a key's tickets commit in the order of their numbers.
	 * @param ticket the ticket
	 * @return the next ticket's number; 0 if there is none, or if either ticket is gone or its
	 * lease has ended
	 * @throws org.springframework.dao.DataAccessException if the database failed
	 */
	long following(Ticket ticket);

	/**
	 * Extends tickets whose lease has not ended to {@code lease} from the database's now, in
	 * as few statements as the database allows.
	 * @param tickets the tickets, distinct
	 * @param lease the lease from now
	 * @return for each ticket, in order, whether it was extended (else it is gone or its
	 * lease had ended: it is out of the queue)
	 */
	List<Boolean> renewAll(List<Ticket> tickets, Duration lease);

	/**
	 * Deletes a ticket, checking its owner: the holder's release, or a waiter that gives up.
	 * @param ticket the ticket
	 * @return whether it was there
	 */
	boolean leave(Ticket ticket);

	/**
	 * Deletes the tickets an attempt of {@link #enqueue} may have written, found by the
	 * attempt's owner id: for an attempt that failed without knowing whether the database
	 * committed it.
	 * @param key the key
	 * @param owner the attempt's owner id
	 * @return whether there was such a ticket
	 */
	boolean abandon(String key, String owner);

	/**
	 * Deletes the tickets attempts of {@link #enqueue} may have written, found by their
	 * owner ids, in as few statements as the database allows: for attempts that failed
	 * without knowing whether the database committed them, whose statements may still commit.
	 * @param keysByOwner each attempt's key, by its owner id
	 * @return how many tickets were deleted
	 */
	default int abandonAll(Map<String, String> keysByOwner) {
		int deleted = 0;
		for (Map.Entry<String, String> attempt : keysByOwner.entrySet()) {
			if (abandon(attempt.getValue(), attempt.getKey())) {
				deleted++;
			}
		}
		return deleted;
	}

	/**
	 * Deletes tickets whose lease has ended.
	 * @param limit the most rows to delete
	 * @return the number deleted
	 */
	int deleteExpired(int limit);

	/**
	 * Why the fair mode cannot be used here, if it cannot: its tables are missing, or the
	 * database is a multi-primary cluster, whose nodes each number and lock on their own.
	 * @return the reason, or {@code null} if it can be used
	 */
	@Nullable String unavailable();

	/**
	 * Reads the tickets that hold their key now (the head of each key's queue, by the
	 * database's clock), in key order, for monitoring.
	 * @param limit the most tickets to read
	 * @return the holding tickets
	 * @throws UnsupportedOperationException if this repository cannot list them
	 */
	default List<HeldTicket> holders(int limit) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot list the holders of its queue");
	}

	/**
	 * A ticket that holds its key, as {@link #holders(int)} reads it.
	 * @param ticket the ticket: key, owner and number (its fencing token)
	 * @param expiresAt when its lease ends, in the database's time
	 */
	record HeldTicket(Ticket ticket, Instant expiresAt) {
	}

	/**
	 * A ticket in a key's queue.
	 *
	 * @param key the stored key
	 * @param owner the owner id of the acquisition
	 * @param number the ticket's number, its fencing token
	 */
	record Ticket(String key, String owner, long number) {
	}

	/**
	 * A ticket just enqueued, and the head its enqueue saw.
	 *
	 * @param ticket the ticket
	 * @param head the head as {@link #head} gives it, or {@link #NOT_LOOKED}
	 */
	record Enqueued(Ticket ticket, long head) {

		/** The head of an enqueue that did not look at it. */
		public static final long NOT_LOOKED = -1;

	}

}
