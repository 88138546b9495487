package io.github.dblock.engine;

import java.time.Duration;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockReleaseException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;


/**
 * What happens when a hold's last handle is closed: inside a transaction, nothing until the
 * transaction completes; then the lease passes to the next local waiter, or, at the end of
 * a local turn when another JVM asked for the key, goes back to the database and the next
 * local waiter holds back ({@link LocalTurn}); else it is ended in the database before the
 * release returns. A release that could not be confirmed (its statement failed: the key may
 * stay taken until the lease ends) throws {@link LockReleaseException} to the thread that
 * released.
 */
final class ReleasePath {

	private static final Log logger = LogFactory.getLog(ReleasePath.class);

	/** What becomes of a released lease. */
	private enum Next {

		/** To the next local waiter, as it is. */
		HAND_ON,

		/** Given back to the database for another JVM that asked for it. */
		CEDED,

		/** Ended in the database. */
		END

	}

	private final LockMode mode;

	private final LeaseWatchdog watchdog;

	private final LocalKeys<LocalKey> keys;

	private final LocalTurn turn;

	private final Events events;

	/** The mode whose holds these are, as told to the listeners. */
	private final DbLockMode lockMode;

	ReleasePath(LockMode mode, LeaseWatchdog watchdog, LocalKeys<LocalKey> keys, LockEngineSettings settings, Events events,
			DbLockMode lockMode) {
		this.events = events;
		this.lockMode = lockMode;
		this.mode = mode;
		this.watchdog = watchdog;
		this.keys = keys;
		this.turn = new LocalTurn(mode, watchdog, settings, events);
	}

	/**
	 * Releases a hold whose count came to zero, after the current transaction if there is one.
	 * @throws LockReleaseException if it is released now and the release could not be
	 * confirmed
	 */
	void release(Hold hold) {
		hold.releaseAfterTransaction(() -> releaseNow(hold));
	}

	/** The turns of the keys whose releases this path performs. */
	LocalTurn turn() {
		return this.turn;
	}

	/**
	 * Releases a hold whose count came to zero, now.
	 * @throws LockReleaseException if the release could not be confirmed
	 */
	void releaseNow(Hold hold) {
		HeldLease lease = hold.lease;
		LocalKey local = lease.local;
		try {
			if (local.hold != hold) {
				// superseded by a fresh acquisition of its thread: the gate and the key are the new hold's
				hold.done = true;
				return;
			}
			if (lease.remainingNanos() <= 0 && lease.lostAt == null) {
				hold.lost(lease.deadlineInstant());
				this.events.lost(lease.lease.key(), this.lockMode);
				logger.warn("Lock '" + lease.lease.key() + "' was released after its lease ended on the local clock (at "
						+ lease.deadlineInstant() + "): another owner may have held it meanwhile");
			}
			local.hold = null;
			hold.done = true;
			Next next;
			try {
				next = next(hold);
			}
			catch (LockReleaseException ex) {
				local.gate.leave(this.turn.holdBackUntil());
				throw ex;
			}
			switch (next) {
				case HAND_ON -> {
					if (!local.gate.handOn(lease)) {
						endAndLeave(lease, hold.request.minimumHold());
					}
				}
				case CEDED -> local.gate.leave(this.turn.holdBackUntil());
				case END -> endAndLeave(lease, hold.request.minimumHold());
			}
		}
		finally {
			this.keys.exit(local);
			this.events.released(lease.lease.key(), this.lockMode, System.nanoTime() - hold.startedAt);
		}
	}

	private Next next(Hold hold) {
		HeldLease lease = hold.lease;
		if (!hold.request.minimumHold().isZero() || !lease.canHandOn() || lease.local.gate.queued() == 0) {
			return Next.END;
		}
		if (!this.turn.over(lease.turnStart)) {
			return Next.HAND_ON;
		}
		if (this.turn.cedeIfWanted(lease)) {
			return Next.CEDED;
		}
		lease.turnStart = System.nanoTime();
		return Next.HAND_ON;
	}

	/**
	 * Ends a lease and leaves its key's gate.
	 * @throws LockReleaseException if the release could not be confirmed
	 */
	private void endAndLeave(HeldLease lease, Duration minimumHold) {
		RuntimeException failure;
		try {
			failure = tryEnd(lease, minimumHold);
		}
		finally {
			lease.local.gate.leave();
		}
		if (failure != null) {
			throw new LockReleaseException(lease.lease.key(), lease.expiresAt, failure);
		}
	}

	/**
	 * Ends a lease in the database, once, and returns after the commit; a row found gone or
	 * another owner's marks the lease lost. Never throws: a lease that could not be ended
	 * ends at its expiry, which is logged; for the engine's own releases, with no caller to
	 * tell.
	 */
	void end(HeldLease lease, Duration minimumHold) {
		RuntimeException failure = tryEnd(lease, minimumHold);
		if (failure != null) {
			logger.warn("Could not release lock '" + lease.lease.key() + "' (owner " + lease.lease.owner()
					+ "); it stays taken until its lease ends at " + lease.expiresAt, failure);
		}
	}

	/**
	 * Ends a lease in the database, once, and returns after the commit.
	 * @return the failure of the release, whose outcome is then unknown (the key may stay
	 * taken until the lease ends), or {@code null}
	 */
	private @Nullable RuntimeException tryEnd(HeldLease lease, Duration minimumHold) {
		lease.io.lock();
		try {
			if (lease.ended) {
				return null;
			}
			RuntimeException failure = null;
			try {
				if (!this.mode.release(lease.current(), minimumHold)) {
					lease.lost("its row was gone or another owner's when released (its lease ended at " + lease.expiresAt
							+ ")");
				}
				else if (lease.lostAt == null) {
					this.events.holdEnded(lease.lease.key(), lease.mode, lease.lease.owner(), false);
				}
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			lease.ended = true;
			this.watchdog.unwatch(lease);
			return failure;
		}
		finally {
			lease.io.unlock();
		}
	}

}
