package io.github.dblock.engine;

import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * The threads of this JVM that want one key: its holder, and the waiting tickets in
 * number order, the first of which alone asks the database while there is no holder.
 */
final class FairKey extends LocalKeys.Entry {

	/** Guarded by this. */
	private final TreeSet<FairTicket> waiters = new TreeSet<>(
			(a, b) -> Long.compare(a.ticket.number(), b.ticket.number()));

	volatile @Nullable FairTicket holder;

	FairKey(String key) {
		super(key);
	}

	synchronized void add(FairTicket ticket) {
		this.waiters.add(ticket);
	}

	/** Whether the ticket is the one to ask the database: no local holder, the earliest waiter. */
	synchronized boolean isPoller(FairTicket ticket) {
		return this.holder == null && !this.waiters.isEmpty() && this.waiters.first() == ticket;
	}

	synchronized boolean busy() {
		return this.holder != null || !this.waiters.isEmpty();
	}

	synchronized int waiting() {
		return this.waiters.size();
	}

	synchronized void promote(FairTicket ticket) {
		this.waiters.remove(ticket);
		this.holder = ticket;
	}

	/** The earliest waiter, if this ticket holds the key and one waits. */
	synchronized @Nullable FairTicket earliestWaiter(FairTicket holder) {
		return (this.holder == holder && !this.waiters.isEmpty()) ? this.waiters.first() : null;
	}

	/**
	 * Makes the earliest waiter the holder in place of the one that releases, if they still
	 * are, and wakes its thread, which takes the key ({@code holder == ticket}).
	 * @return whether it was handed on
	 */
	synchronized boolean handOn(FairTicket from, FairTicket to) {
		if (this.holder != from || this.waiters.isEmpty() || this.waiters.first() != to) {
			return false;
		}
		this.waiters.remove(to);
		this.holder = to;
		LockSupport.unpark(to.thread);
		return true;
	}

	/**
	 * Takes a waiter out; if it was the one asking, the next one asks now. One that was
	 * handed the key and gives it up before it took it leaves it to the next one too.
	 */
	synchronized void remove(FairTicket ticket) {
		if (this.holder == ticket) {
			this.holder = null;
			wakeFirst();
			return;
		}
		boolean first = !this.waiters.isEmpty() && this.waiters.first() == ticket;
		if (this.waiters.remove(ticket) && first) {
			wakeFirst();
		}
	}

	/**
	 * The holder's ticket was deleted: the next waiter asks, unless the key was handed on;
	 * if it was, and the waiter gave it up before it took it, the next waiter asks now that
	 * the released ticket is gone.
	 */
	synchronized void released(FairTicket ticket, boolean handedOn) {
		if (this.holder == ticket) {
			this.holder = null;
			wakeFirst();
		}
		else if (handedOn) {
			wakeFirst();
		}
	}

	private void wakeFirst() {
		if (this.holder == null && !this.waiters.isEmpty()) {
			LockSupport.unpark(this.waiters.first().thread);
		}
	}

	/**
	 * Another owner's ticket that was ahead left the queue ({@link WakeUps}): the waiter that
	 * asks the database, if one does, asks again at once.
	 */
	synchronized void woken() {
		wakeFirst();
	}

	synchronized void wakeAll() {
		for (FairTicket waiter : this.waiters) {
			LockSupport.unpark(waiter.thread);
		}
	}

}
