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
 * <p>
 * A thread may also leave the gate <em>later</em>: {@link #handOnOrRelease} marks the gate
 * as being released when nobody waits, and another thread then hands it on or leaves it.
 * While it is being released, a thread that would not wait at all ({@code nanos <= 0})
 * still queues, to learn the outcome: it passes if it is the next in line, and is refused
 * if the gate goes to a thread ahead of it.
 *
 * @param <T> what a leaving thread hands on
 */
final class LocalGate<T> {

	private final ArrayDeque<Waiter<T>> waiters = new ArrayDeque<>();

	private boolean taken;

	/** Taken by a holder that is gone; another thread will hand the gate on or leave it. */
	private boolean releasing;

	/**
	 * Waits up to {@code nanos} to pass; with {@code nanos <= 0}, passes only if the gate is
	 * free or, once it is released, this thread is the next in line.
	 * @return what the previous thread handed on ({@link Passage#handedOn()} may be
	 * {@code null}), or {@code null} if the time ran out or the gate went to another thread
	 * @throws InterruptedException if interrupted while waiting (not once passed)
	 */
	@Nullable Passage<T> enter(long nanos) throws InterruptedException {
		Waiter<T> waiter;
		synchronized (this) {
			if (!this.taken && this.waiters.isEmpty()) {
				this.taken = true;
				return new Passage<>(null);
			}
			if (nanos <= 0 && !this.releasing) {
				return null;
			}
			waiter = new Waiter<>(Thread.currentThread(), nanos <= 0);
			this.waiters.addLast(waiter);
		}
		long deadline = System.nanoTime() + nanos;
		while (true) {
			Passage<T> passage = waiter.passage;
			if (passage != null) {
				return (passage == REFUSED) ? null : passage;
			}
			boolean interrupted = Thread.interrupted();
			long remaining = waiter.untilReleased ? Long.MAX_VALUE : deadline - System.nanoTime();
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
				Passage<T> passed = waiter.passage;
				if (interrupted) {
					if (passed == REFUSED) {
						throw new InterruptedException();
					}
					// passed at the same moment: keep the gate, and the interrupt for the caller
					Thread.currentThread().interrupt();
				}
				return (passed == REFUSED) ? null : passed;
			}
			LockSupport.parkNanos(this, remaining);
		}
	}

	/**
	 * Passes the gate and {@code handedOn} to the next waiter, if there is one.
	 * @return whether a waiter took them; if not, the gate stays taken by the caller
	 */
	boolean handOn(T handedOn) {
		synchronized (this) {
			if (this.waiters.isEmpty()) {
				return false;
			}
			pass(handedOn);
		}
		return true;
	}

	/**
	 * Passes the gate and {@code handedOn} to the next waiter if there is one; if not, marks
	 * the gate as being released: the caller is gone, and another thread will
	 * {@link #handOn} or {@link #leave} for it.
	 * @return whether a waiter took them
	 */
	boolean handOnOrRelease(T handedOn) {
		synchronized (this) {
			if (handOn(handedOn)) {
				return true;
			}
			this.releasing = true;
			return false;
		}
	}

	/**
	 * Leaves the gate: the next waiter passes, with nothing handed on.
	 */
	void leave() {
		synchronized (this) {
			if (this.waiters.isEmpty()) {
				this.taken = false;
				this.releasing = false;
				return;
			}
			pass(null);
		}
	}

	/** Passes the gate to the first waiter; refuses those after it that would not wait. */
	private void pass(@Nullable T handedOn) {
		Waiter<T> next = this.waiters.removeFirst();
		next.passage = new Passage<>(handedOn);
		LockSupport.unpark(next.thread);
		if (this.releasing) {
			this.releasing = false;
			this.waiters.removeIf((waiter) -> {
				if (waiter.untilReleased) {
					waiter.passage = refused();
					LockSupport.unpark(waiter.thread);
				}
				return waiter.untilReleased;
			});
		}
	}

	@SuppressWarnings("unchecked")
	private static <T> Passage<T> refused() {
		return (Passage<T>) REFUSED;
	}

	/**
	 * A thread's pass through the gate.
	 *
	 * @param <T> what may be handed on
	 * @param handedOn what the previous thread handed on, or {@code null}
	 */
	record Passage<T>(@Nullable T handedOn) {
	}

	/** What a waiter that would not wait gets when the gate goes to a thread ahead of it. */
	private static final Passage<?> REFUSED = new Passage<>(null);

	private static final class Waiter<T> {

		final Thread thread;

		/** Waits only for the gate's release to end, however long that takes. */
		final boolean untilReleased;

		volatile @Nullable Passage<T> passage;

		Waiter(Thread thread, boolean untilReleased) {
			this.thread = thread;
			this.untilReleased = untilReleased;
		}

	}

}
