package io.github.dblock.engine;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.HeldRow;
import io.github.dblock.jdbc.Lease;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * One local acquisition of a lease, by one thread, with its reentrant count; the lease is
 * released (or handed on) when the count comes back to zero.
 */
final class Hold implements Handle.Source {

	final HeldLease lease;

	final LockRequest request;

	/** Which local holder of the lease this is: 0 for the one that took it from the database. */
	final int sequence;

	final Thread thread = Thread.currentThread();

	/** The {@link System#nanoTime()} this hold began. */
	final long startedAt = System.nanoTime();

	private final AtomicInteger count = new AtomicInteger();

	private final Consumer<Hold> release;

	/** When the lease was found lost (or ended) while this hold had it. */
	private volatile @Nullable Instant lostSince;

	/** Released or handed on: the lease is no longer this hold's. */
	volatile boolean done;

	/** Counted down to zero inside a transaction: released when it completes. */
	private boolean deferred;

	Hold(HeldLease lease, LockRequest request, int sequence, Consumer<Hold> release) {
		this.lease = lease;
		this.request = request;
		this.sequence = sequence;
		this.release = release;
		lease.holder = this;
	}

	@Override
	public String key() {
		return this.lease.lease.key();
	}

	@Override
	public Instant expiresAt() {
		return this.lease.expiresAt;
	}

	/** Larger than every earlier holder's: the database's token, then the local sequence. */
	@Override
	public long token() {
		return (this.lease.lease.token() << HeldLease.HANDOFF_BITS) | this.sequence;
	}

	/** Takes the hold once more, for a new handle. */
	LockHandle reenter() {
		this.count.incrementAndGet();
		return new Handle(this);
	}

	/**
	 * Takes the hold once more if it is still held, or waits for its transaction: another
	 * thread may have closed its last handle a moment ago.
	 * @return a new handle, or {@code null}
	 */
	@Nullable LockHandle reenterIfHeld() {
		for (int held = this.count.get(); held > 0; held = this.count.get()) {
			if (this.count.compareAndSet(held, held + 1)) {
				return new Handle(this);
			}
		}
		synchronized (this) {
			if (this.deferred && this.count.compareAndSet(0, 1)) {
				return new Handle(this);
			}
		}
		return null;
	}

	/** Whether its thread holds it: counted up, or released only when its transaction completes. */
	synchronized boolean isActive() {
		return !this.done && (this.count.get() > 0 || this.deferred);
	}

	/**
	 * Marks it as waiting for a transaction to complete, once.
	 * @return whether it was not marked already
	 */
	private synchronized boolean defer() {
		if (this.deferred) {
			return false;
		}
		this.deferred = true;
		return true;
	}

	/**
	 * Ends the wait for the transaction.
	 * @return whether it is to be released now: not taken again meanwhile
	 */
	private synchronized boolean completed() {
		this.deferred = false;
		return this.count.get() == 0;
	}

	/**
	 * Runs its release now, or, inside a transaction, once the transaction has completed
	 * (the data written under the lock commits with it, and the next holder must see it),
	 * unless it was taken again meanwhile. It stays held until then.
	 * @param release what ends it
	 */
	void releaseAfterTransaction(Runnable release) {
		if (TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.isActualTransactionActive()) {
			if (defer()) {
				TransactionSynchronizationManager.registerSynchronization(new AfterTransaction(this, release));
			}
			return;
		}
		release.run();
	}

	@Override
	public void countDown() {
		if (this.count.decrementAndGet() == 0) {
			this.release.accept(this);
		}
	}

	void lost(Instant at) {
		if (this.lostSince == null) {
			this.lostSince = at;
		}
	}

	@Override
	public boolean isHeld() {
		return !this.done && this.lostSince == null && this.lease.isValid();
	}

	/**
	 * The row, even once the hold is done: an open handle of a hold that another thread
	 * ended (at shutdown) must fail its transaction's guard, which finds the row gone.
	 */
	@Override
	public @Nullable HeldRow row() {
		HeldRow.Table table = switch (this.lease.mode) {
			case LEASE -> HeldRow.Table.LEASE;
			case READ, WRITE -> HeldRow.Table.READ_WRITE;
			default -> null;
		};
		if (table == null) {
			return null;
		}
		Lease current = this.lease.lease;
		return new HeldRow(table, current.key(), current.owner(), current.token());
	}

	@Override
	public Optional<Instant> lostSince() {
		Instant lost = this.lostSince;
		if (lost == null && !this.done && this.lease.remainingNanos() < 0) {
			// its time is over on the local clock: another owner may hold the key
			lost = this.lease.deadlineInstant();
		}
		return Optional.ofNullable(lost);
	}

	/**
	 * The release of a hold whose count came to zero inside a transaction, run once the
	 * transaction has completed unless the hold was taken again meanwhile.
	 */
	static final class AfterTransaction implements TransactionSynchronization {

		final Hold hold;

		private final Runnable release;

		AfterTransaction(Hold hold, Runnable release) {
			this.hold = hold;
			this.release = release;
		}

		@Override
		public void afterCompletion(int status) {
			if (this.hold.completed()) {
				this.release.run();
			}
		}

	}

}
