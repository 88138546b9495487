package io.github.dblock.engine;

import java.time.Instant;
import java.util.function.BooleanSupplier;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockReleaseException;
import io.github.dblock.jdbc.FairLockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The fair mode's release of a held ticket ({@link FairStrategy}): the ticket's delete, once,
 * and the key passed on to this JVM's next waiter, before the delete when that waiter's
 * ticket is the next in the queue (the hand-on), else once the delete has committed.
 */
final class FairRelease {

	private static final Log logger = LogFactory.getLog(FairRelease.class);

	private final FairLockRepository queue;

	private final FairRenewal renewal;

	private final LocalKeys<FairKey> keys;

	private final Events events;

	/** Whether the mode has shut down: no hand-on then. */
	private final BooleanSupplier closed;

	FairRelease(FairLockRepository queue, FairRenewal renewal, LocalKeys<FairKey> keys, Events events,
			BooleanSupplier closed) {
		this.queue = queue;
		this.renewal = renewal;
		this.keys = keys;
		this.events = events;
		this.closed = closed;
	}

	/**
	 * Releases a held ticket, for its last handle's close (inside a transaction, once it has
	 * completed).
	 * @throws LockReleaseException if its delete could not be confirmed: the key stays
	 * taken until the ticket's lease ends
	 */
	void release(FairTicket held) {
		held.releaseAfterTransaction(() -> {
			Instant end = held.expiresAt();
			RuntimeException failure = end(held);
			if (failure != null) {
				throw new LockReleaseException(held.ticket.key(), end, failure);
			}
		});
	}

	/** Releases a held ticket for the mode itself, with no caller to tell: a failure is logged. */
	void releaseQuietly(FairTicket held) {
		RuntimeException failure = end(held);
		if (failure != null) {
			logger.warn("Could not delete the ticket of fair lock '" + held.ticket.key() + "'; it leaves the queue when "
					+ "its lease ends", failure);
		}
	}

	/**
	 * Deletes a held ticket, once, and passes the key on locally.
	 * @return the failure of the delete, whose outcome is then unknown, or {@code null}
	 */
	private @Nullable RuntimeException end(FairTicket held) {
		if (!held.released.compareAndSet(false, true)) {
			return null;
		}
		FairKey local = held.local;
		held.endedBeforeRelease();
		held.ended = true;
		this.renewal.unwatch(held);
		boolean handedOn = handOn(held, local);
		RuntimeException failure = null;
		try {
			if (!this.queue.leave(held.ticket)) {
				if (handedOn) {
					// held until the read before the hand-on; deleted since as ended
					logger.debug("The ticket " + held.ticket.number() + " of fair lock '" + held.ticket.key()
							+ "' was gone when its delete ran, after it was handed on");
				}
				else {
					held.lost("its ticket was gone when it was released", true);
				}
			}
			else if (held.lostAt == null) {
				held.holdEnded(false);
			}
		}
		catch (RuntimeException ex) {
			failure = ex;
		}
		finally {
			held.done = true;
			local.released(held, handedOn);
			this.keys.exit(local);
			this.events.released(held.ticket.key(), DbLockMode.FAIR, System.nanoTime() - held.startedAt);
		}
		return failure;
	}

	/**
	 * Passes the key to this JVM's earliest waiter if its ticket is the next one in the
	 * queue, before the released ticket is deleted: it holds from now on, with no statement
	 * of its own, while the delete runs. One read tells that the released ticket is still
	 * in the queue with its lease valid by the database's clock (so it was held until then:
	 * no one passes a ticket without deleting it) and that the waiter's comes next, its
	 * lease valid by the database's clock too. No other ticket can be the head meanwhile:
	 * the released ticket is ahead of every other, and the waiter's ahead of every other but
	 * it; none can come between them, since a key's tickets commit in the order of their
	 * numbers and the waiter's committed before the read. Otherwise (no such waiter, a
	 * released ticket that was lost, or gone or ended by the read, a waiter's ticket ended
	 * by the read, another ticket between them, a read that failed) the key is passed on
	 * once the delete has committed, as the head is asked for.
	 * @return whether the read found the released ticket held until then and the waiter's
	 * next, and the key was handed on unless the waiter had just left
	 */
	private boolean handOn(FairTicket held, FairKey local) {
		FairTicket next = local.earliestWaiter(held);
		if (next == null || held.lostAt != null || !next.isValid() || this.closed.getAsBoolean()) {
			return false;
		}
		long following;
		try {
			following = this.queue.following(held.ticket);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the ticket after " + held.ticket.number() + " of fair lock '"
					+ held.ticket.key() + "'; it asks for its turn", ex);
			return false;
		}
		if (following != next.ticket.number()) {
			return false;
		}
		// held until the read: its end is told before the next hold starts
		held.holdEnded(false);
		local.handOn(held, next);
		return true;
	}

}
