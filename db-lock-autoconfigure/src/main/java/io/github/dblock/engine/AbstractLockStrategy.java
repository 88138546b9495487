package io.github.dblock.engine;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockRequest;

/**
 * The algorithm every {@link LockStrategy} shares, written once with steps for the
 * strategy to supply, the way Spring's {@code AbstractPlatformTransactionManager} writes the
 * transaction algorithm once: the shutdown (refuse, wait for holders, end what is left,
 * stop), the wait between attempts ({@link Backoff}), and the holding back after a cede.
 */
abstract class AbstractLockStrategy implements LockStrategy {

	private static final long SHUTDOWN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private volatile boolean closed;

	/**
	 * Whether the engine is shutting down: no new acquisition, no further attempt.
	 * @return whether it is
	 */
	protected final boolean isClosed() {
		return this.closed;
	}

	/**
	 * Throws if the engine is shutting down.
	 * @param key the key asked for, named in the message
	 */
	protected final void refuseIfClosed(String key) {
		if (this.closed) {
			throw new DbLockException("Could not acquire lock '" + key + "': the lock engine is shut down");
		}
	}

	/**
	 * Adds a key to the waiting keys if threads wait for it.
	 * @param waiting where to add it
	 * @param key the stored key
	 * @param mode the mode they want it in
	 * @param threads how many threads wait, possibly none
	 */
	protected static void add(List<WaitingKey> waiting, String key, DbLockMode mode, int threads) {
		if (threads > 0) {
			waiting.add(new WaitingKey(key, mode, threads));
		}
	}

	@Override
	public final void refuse() {
		this.closed = true;
		wakeWaiters();
	}

	@Override
	public final void shutdown(long deadline) {
		refuse();
		while (holding() && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(SHUTDOWN_CHECK_NANOS);
		}
		endHolds();
		stop();
	}

	/** Wakes the threads that wait in this JVM, so that they find the engine shut down. */
	protected abstract void wakeWaiters();

	/**
	 * Whether a thread of this JVM holds a key now.
	 * @return whether one does
	 */
	protected abstract boolean holding();

	/** Ends every hold still held, marked lost: the application shuts down. */
	protected abstract void endHolds();

	/** Stops what the strategy runs in the background. */
	protected void stop() {
	}

	/**
	 * Waits before the next attempt: the back-off's pause, cut at the deadline, and ended
	 * early by the engine's shutdown.
	 * @param backoff the back-off
	 * @param attempt how many attempts failed before, from 0
	 * @param deadline {@link System#nanoTime()} when the wait ends
	 * @return {@code false} if the wait ran out or the engine shut down
	 * @throws InterruptedException if the thread was interrupted
	 */
	protected final boolean pause(Backoff backoff, int attempt, long deadline) throws InterruptedException {
		return pause(backoff, attempt, deadline, () -> false);
	}

	/**
	 * Waits before the next attempt, as {@link #pause(Backoff, int, long)} does, and ends the
	 * pause early once {@code woken} says so (checked after each unpark of the thread).
	 * @param backoff the back-off
	 * @param attempt how many attempts failed before, from 0
	 * @param deadline {@link System#nanoTime()} when the wait ends
	 * @param woken whether something the thread waits for happened: it asks again at once
	 * @return {@code false} if the wait ran out or the engine shut down
	 * @throws InterruptedException if the thread was interrupted
	 */
	protected final boolean pause(Backoff backoff, int attempt, long deadline, BooleanSupplier woken)
			throws InterruptedException {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0 || this.closed) {
			return false;
		}
		long until = System.nanoTime() + Math.min(backoff.delayNanos(attempt), remaining);
		for (long left = until - System.nanoTime(); left > 0 && !this.closed && !woken.getAsBoolean();
				left = until - System.nanoTime()) {
			park(left);
		}
		return !this.closed;
	}

	/**
	 * Parks the thread; it may return early (an unpark, a spurious wake-up).
	 * @param nanos how long at most
	 * @throws InterruptedException if the thread was interrupted
	 */
	protected final void park(long nanos) throws InterruptedException {
		LockSupport.parkNanos(this, nanos);
		if (Thread.interrupted()) {
			throw new InterruptedException();
		}
	}

	/**
	 * Waits until {@code until} (0 for not at all) or the deadline, whichever is first: after
	 * a cede, so that the other owner's next attempt comes first.
	 * @param until {@link System#nanoTime()} until when, 0 for no wait
	 * @param deadline {@link System#nanoTime()} when the wait ends
	 * @return whether the hold-back is over; {@code false} if the deadline came first or the
	 * engine shut down, and then the caller does not ask the database: an attempt inside the
	 * hold-back could take back the key this JVM just gave up
	 * @throws InterruptedException if the thread was interrupted
	 */
	protected final boolean holdBack(long until, long deadline) throws InterruptedException {
		if (until == 0) {
			return !this.closed;
		}
		long now = System.nanoTime();
		for (; now - until < 0 && now - deadline < 0 && !this.closed; now = System.nanoTime()) {
			park(Math.min(until - now, deadline - now));
		}
		return now - until >= 0 && !this.closed;
	}

	/**
	 * The part of a hold-back still to come, for the next local waiter when the thread that
	 * held back leaves without the key.
	 * @param until {@link System#nanoTime()} until when, 0 for none
	 * @return {@code until} if it is still to come, else 0
	 */
	protected static long holdBackLeft(long until) {
		return (until != 0 && System.nanoTime() - until < 0) ? until : 0;
	}

	/**
	 * The message of a database failure during an acquisition.
	 * @param request the request
	 * @param ex the failure
	 * @return the exception to throw
	 */
	protected static DbLockException failed(LockRequest request, RuntimeException ex) {
		return new DbLockException("Could not acquire lock '" + request.key() + "' in the " + request.mode()
				+ " mode: the database failed (" + ex.getMessage() + ")", ex);
	}

}
