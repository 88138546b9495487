package io.github.dblock.engine;

import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * A fair gate for the threads of this JVM that want one key: one thread at a time passes,
 * the others wait in arrival order. Leaving, a thread may hand the next one something (the
 * lease it held) directly, or tell it to hold back for a moment before it asks the
 * database: the choice of the next thread and the hand-over happen together, so a waiter
 * that gives up at that moment either gets the gate or is out of the queue, never in
 * between.
 *
 * @param <T> what a leaving thread hands on
 */
final class LocalGate<T> {

	private final ArrayDeque<Waiter<T>> waiters = new ArrayDeque<>();

	private boolean taken;

	/** Refuses every waiter: the engine is shutting down. */
	private boolean refusing;

	/**
	 * Waits up to {@code nanos} to pass; with {@code nanos <= 0}, passes only if the gate is
	 * free.
	 * @return the passage, or {@code null} if the time ran out
	 * @throws InterruptedException if interrupted while waiting (not once passed)
	 */
	@Nullable Passage<T> enter(long nanos) throws InterruptedException {
		Waiter<T> waiter;
		synchronized (this) {
			if (this.refusing) {
				return null;
			}
			if (!this.taken && this.waiters.isEmpty()) {
				this.taken = true;
				return Passage.free();
			}
			if (nanos <= 0) {
				return null;
			}
			waiter = new Waiter<>(Thread.currentThread());
			this.waiters.addLast(waiter);
		}
		long deadline = System.nanoTime() + nanos;
		while (true) {
			Passage<T> passage = waiter.passage;
			if (passage != null) {
				return passage;
			}
			if (waiter.refused) {
				return null;
			}
			boolean interrupted = Thread.interrupted();
			long remaining = deadline - System.nanoTime();
			if (interrupted || remaining <= 0) {
				synchronized (this) {
					if (waiter.passage == null) {
						this.waiters.remove(waiter);
						if (interrupted) {
							throw new InterruptedException();
						}
						return null;
					}
				}
				if (interrupted) {
					// passed at the same moment: keep the gate, and the interrupt for the caller
					Thread.currentThread().interrupt();
				}
				return waiter.passage;
			}
			LockSupport.parkNanos(this, remaining);
		}
	}

	/**
	 * Passes the gate and {@code handedOn} to the next waiter, if there is one.
	 * @return whether a waiter took them; if not, the gate stays taken by the caller
	 */
	synchronized boolean handOn(T handedOn) {
		if (this.waiters.isEmpty()) {
			return false;
		}
		pass(new Passage<>(handedOn, 0));
		return true;
	}

	/**
	 * Leaves the gate: the next waiter passes, with nothing handed on.
	 */
	void leave() {
		leave(0);
	}

	/**
	 * Leaves the gate; the next waiter passes with nothing handed on, and is asked not to
	 * ask the database before {@code holdBackUntil}.
	 * @param holdBackUntil a {@link System#nanoTime()}, or 0 for no holding back
	 */
	synchronized void leave(long holdBackUntil) {
		if (this.waiters.isEmpty()) {
			this.taken = false;
			return;
		}
		pass(new Passage<>(null, holdBackUntil));
	}

	/**
	 * Sends every waiter away, now and from now on, as if its time had run out.
	 */
	synchronized void refuseWaiters() {
		this.refusing = true;
		for (Waiter<T> waiter : this.waiters) {
			waiter.refused = true;
			LockSupport.unpark(waiter.thread);
		}
		this.waiters.clear();
	}

	/**
	 * How many threads wait to pass.
	 * @return the number
	 */
	synchronized int queued() {
		return this.waiters.size();
	}

	private void pass(Passage<T> passage) {
		Waiter<T> next = this.waiters.removeFirst();
		next.passage = passage;
		LockSupport.unpark(next.thread);
	}

	/**
	 * A thread's pass through the gate.
	 *
	 * @param <T> what may be handed on
	 * @param handedOn what the previous thread handed on, or {@code null}
	 * @param holdBackUntil the {@link System#nanoTime()} before which the thread should not
	 * ask the database, or 0
	 */
	record Passage<T>(@Nullable T handedOn, long holdBackUntil) {

		static <T> Passage<T> free() {
			return new Passage<>(null, 0);
		}

	}

	private static final class Waiter<T> {

		final Thread thread;

		volatile @Nullable Passage<T> passage;

		volatile boolean refused;

		Waiter(Thread thread) {
			this.thread = thread;
		}

	}

}
