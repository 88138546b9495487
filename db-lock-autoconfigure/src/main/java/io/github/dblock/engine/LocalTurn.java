package io.github.dblock.engine;

import java.time.Duration;

import io.github.dblock.LockReleaseException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The turns a JVM takes at a key that its threads pass among themselves while other JVMs
 * want it too, one implementation for every mode that queues its threads locally: within a
 * turn ({@link LockEngineSettings#localTurn()}) the key passes to the next local thread; at
 * its end, if another owner's refused attempt marked the key as wanted less than
 * {@link LockEngineSettings#wantedWithin()} ago, the lease is ceded (ended in the database
 * by a statement that checks the mark) and the next local thread holds back for
 * {@link LockEngineSettings#holdBack()}, so that the other JVM gets the key within its wait;
 * else a new turn begins.
 * <p>
 * A cede whose outcome is unknown (it failed after it was sent: it may have committed) is
 * taken as the worse case: the lease is ended for this JVM, its row deleted if it is still
 * there, and never passed on; if that delete fails too, {@link LockReleaseException}.
 */
final class LocalTurn {

	private static final Log logger = LogFactory.getLog(LocalTurn.class);

	private final LockMode mode;

	private final LeaseWatchdog watchdog;

	private final Events events;

	private final long turnNanos;

	private final Duration wantedWithin;

	private final long holdBackNanos;

	/**
	 * Creates the turns of one mode.
	 * @param mode the mode's cede and release
	 * @param watchdog the watchdog that renews the mode's leases
	 * @param settings the turn, how recent a mark must be, and the hold-back
	 * @param events told of the holds ended
	 */
	LocalTurn(LockMode mode, LeaseWatchdog watchdog, LockEngineSettings settings, Events events) {
		this.mode = mode;
		this.watchdog = watchdog;
		this.events = events;
		this.turnNanos = settings.localTurn().toNanos();
		this.wantedWithin = settings.wantedWithin();
		this.holdBackNanos = settings.holdBack().toNanos();
	}

	/**
	 * Whether the turn begun at {@code turnStart} is over.
	 * @param turnStart a {@link System#nanoTime()}
	 * @return whether it lasted a turn
	 */
	boolean over(long turnStart) {
		return System.nanoTime() - turnStart >= this.turnNanos;
	}

	/**
	 * The {@link System#nanoTime()} before which the next local thread does not ask the
	 * database after a cede.
	 * @return the time
	 */
	long holdBackUntil() {
		return System.nanoTime() + this.holdBackNanos;
	}

	/**
	 * At the end of a turn (see {@link #over}), while other local threads wait for the key:
	 * gives the lease up if another owner asked for its key recently. A cede whose outcome is
	 * unknown gives it up too: it is ended for this JVM, its row deleted if it is still there.
	 * @param lease the lease
	 * @return whether it was ceded or given up (the next local thread then holds back until
	 * {@link #holdBackUntil()}); if not, a new turn begins
	 * @throws LockReleaseException if it was given up and its row's delete failed: the key
	 * may stay taken until the lease ends
	 */
	boolean cedeIfWanted(HeldLease lease) {
		lease.io.lock();
		try {
			boolean ceded;
			try {
				ceded = this.mode.cede(lease.current(), this.wantedWithin);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not learn whether lock '" + lease.lease.key() + "' was given up to another owner; "
						+ "ending it", ex);
				giveUp(lease);
				return true;
			}
			if (ceded) {
				lease.ended = true;
				this.events.holdEnded(lease.lease.key(), lease.mode, lease.lease.owner(), false);
				this.watchdog.unwatch(lease);
			}
			return ceded;
		}
		finally {
			lease.io.unlock();
		}
	}

	/**
	 * Ends a lease that a statement of unknown outcome may have ended already: no statement
	 * about it counts on it any more; its row is deleted if it is still this owner's, and a
	 * row found gone is no loss (the unknown statement ended it).
	 * @throws LockReleaseException if that delete failed: the key may stay taken until the
	 * lease ends
	 */
	private void giveUp(HeldLease lease) {
		lease.ended = true;
		this.watchdog.unwatch(lease);
		RuntimeException failure = null;
		try {
			this.mode.release(lease.current(), Duration.ZERO);
		}
		catch (RuntimeException ex) {
			failure = ex;
		}
		this.events.holdEnded(lease.lease.key(), lease.mode, lease.lease.owner(), false);
		if (failure != null) {
			throw new LockReleaseException(lease.lease.key(), lease.expiresAt, failure);
		}
	}

}
