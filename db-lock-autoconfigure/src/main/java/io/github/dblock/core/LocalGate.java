package io.github.dblock.core;

import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * A fair gate for the threads of this JVM that want one key: one thread at a time passes,
 * the others wait in arrival order. Leaving, a thread may hand the next one something (the
 * lease it held) directly: the choice of the next thread and the hand-over happen
 * together, so a waiter that gives up at that moment either gets the gate or is out of the
 * queue, never in between.
 *
 * @param <T> what a leaving thread hands on
 */
final class LocalGate<T> {

	private final ArrayDeque<Waiter<T>> waiters = new ArrayDeque<>();

	private boolean taken;

	/**
	 * Waits up to {@code nanos} to pass.
	 * @return what the previous thread handed on ({@link Passage#handedOn()} may be
	 * {@code null}), or {@code null} if the time ran out
	 * @throws InterruptedException if interrupted while waiting (not once passed)
	 */
	@Nullable Passage<T> enter(long nanos) throws InterruptedException {
		Waiter<T> waiter;
		synchronized (this) {
			if (!this.taken && this.waiters.isEmpty()) {
				this.taken = true;
				return new Passage<>(null);
			}
			if (nanos <= 0) {
				return null;
			}
			waiter = new Waiter<>(Thread.currentThread());
			this.waiters.addLast(waiter);
		}
		long deadline = System.nanoTime() + nanos;
		while (true) {
			if (waiter.passage != null) {
				return waiter.passage;
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
	boolean handOn(T handedOn) {
		Waiter<T> next;
		synchronized (this) {
			next = this.waiters.pollFirst();
			if (next == null) {
				return false;
			}
			next.passage = new Passage<>(handedOn);
		}
		LockSupport.unpark(next.thread);
		return true;
	}

	/**
	 * Leaves the gate: the next waiter passes, with nothing handed on.
	 */
	void leave() {
		Waiter<T> next;
		synchronized (this) {
			next = this.waiters.pollFirst();
			if (next == null) {
				this.taken = false;
				return;
			}
			next.passage = new Passage<>(null);
		}
		LockSupport.unpark(next.thread);
	}

	/**
	 * A thread's pass through the gate.
	 *
	 * @param <T> what may be handed on
	 * @param handedOn what the previous thread handed on, or {@code null}
	 */
	record Passage<T>(@Nullable T handedOn) {
	}

	private static final class Waiter<T> {

		final Thread thread;

		volatile @Nullable Passage<T> passage;

		Waiter(Thread thread) {
			this.thread = thread;
		}

	}

}
