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
 * A thread may also leave the gate <em>later</em>: when nobody waits,
 * {@link #handOnOrRelease} leaves what it would hand on pending in the gate, for another
 * thread to {@link #reclaim} and then hand on or leave the gate. Until it is reclaimed,
 * the next thread to arrive takes the pending item and the gate at once. Once it is
 * reclaimed and until the gate is passed on, a thread that would not wait at all
 * ({@code nanos <= 0}) still queues, to learn the outcome: it passes if it is the next in
 * line, and is refused if the gate goes to a thread ahead of it.
 *
 * @param <T> what a leaving thread hands on
 */
final class LocalGate<T> {

	private final ArrayDeque<Waiter<T>> waiters = new ArrayDeque<>();

	private boolean taken;

	/** Left by a holder that is gone, for the next thread to arrive or {@link #reclaim}. */
	private @Nullable T pending;

	/** Reclaimed: the thread that did will hand the gate on or leave it. */
	private boolean releasing;

	/**
	 * Waits up to {@code nanos} to pass; with {@code nanos <= 0}, passes only if the gate is
	 * free, holds a pending item, or, once it is released, this thread is the next in line.
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
			T left = this.pending;
			if (left != null) {
				this.pending = null;
				return new Passage<>(left);
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
	 * Passes the gate and {@code handedOn} to the next waiter if there is one; if not, leaves
	 * {@code handedOn} pending: the caller is gone, and the next thread to arrive takes it,
	 * unless another thread {@link #reclaim reclaims} it first.
	 * @return whether a waiter took them
	 */
	synchronized boolean handOnOrRelease(T handedOn) {
		if (handOn(handedOn)) {
			return true;
		}
		this.pending = handedOn;
		return false;
	}

	/**
	 * Takes back an item left pending, if no thread has taken it: the caller then holds the
	 * gate for the thread that left it, to {@link #handOn} or {@link #leave}.
	 * @return whether the item was still pending
	 */
	synchronized boolean reclaim(T left) {
		if (this.pending != left) {
			return false;
		}
		this.pending = null;
		this.releasing = true;
		return true;
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

	/**
	 * Whether an item is pending in the gate, left by a thread that is gone and neither
	 * taken nor reclaimed since.
	 * @param item the item
	 * @return whether it is pending
	 */
	synchronized boolean isPending(T item) {
		return this.pending == item;
	}

	/**
	 * How many threads wait to pass.
	 * @return the number
	 */
	synchronized int queued() {
		return this.waiters.size();
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
