package io.github.dblock.engine;

import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.LockHandle;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A hold with a reentrant count, whose release, when the count comes back to zero inside a
 * transaction, waits for the transaction to complete (the data written under the lock
 * commits with it, and the next holder must see it): the lease and read/write modes'
 * {@link Hold}, the fair mode's {@link FairTicket} and the named mode's hold. Until then the
 * thread that holds it may take it again. The transaction is the innermost one active on
 * the thread when the count came to zero.
 */
abstract class CountedHold implements Handle.Source {

	/** Set while a failed acquisition gives back what it took: released now, not after the transaction. */
	private static final ThreadLocal<Boolean> givingBack = new ThreadLocal<>();

	private final AtomicInteger count = new AtomicInteger();

	/** Counted down to zero inside a transaction: released when it completes. Guarded by this. */
	private boolean deferred;

	/** Takes the hold once more, for a new handle. */
	LockHandle reenter() {
		this.count.incrementAndGet();
		return new Handle(this);
	}

	/**
	 * Takes the hold once more if it is counted up, or if its release waits for its
	 * transaction; not if its release is under way (another thread may have closed its last
	 * handle a moment ago).
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

	/** Whether its release waits for its transaction. */
	private synchronized boolean isDeferred() {
		return this.deferred;
	}

	/**
	 * Runs {@code closes}, in which the holds whose count comes to zero are released at once
	 * even inside a transaction, unless their release already waits for it: for what an
	 * acquisition that failed gives back, under which the caller did no work.
	 * @param closes closes the handles
	 */
	static void givingBack(Runnable closes) {
		givingBack.set(Boolean.TRUE);
		try {
			closes.run();
		}
		finally {
			givingBack.remove();
		}
	}

	/** Whether its count is zero and its release waits for its transaction. */
	synchronized boolean isDeferredOnly() {
		return this.count.get() == 0 && this.deferred;
	}

	/** Whether it is counted up, or released only when its transaction completes. */
	synchronized boolean isCountedOrDeferred() {
		return this.count.get() > 0 || this.deferred;
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
	 * Runs its release now, or, inside a transaction, once the transaction has completed,
	 * unless it was taken again meanwhile. It stays held until then.
	 * @param release what ends it
	 */
	void releaseAfterTransaction(Runnable release) {
		if (TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.isActualTransactionActive()
				&& (givingBack.get() == null || isDeferred())) {
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
			countedDown();
		}
	}

	/** Its count came back to zero: the mode releases it (see {@link #releaseAfterTransaction}). */
	protected abstract void countedDown();

	/**
	 * The release of a hold whose count came to zero inside a transaction, run once the
	 * transaction has completed unless the hold was taken again meanwhile.
	 */
	static final class AfterTransaction implements TransactionSynchronization {

		final CountedHold hold;

		private final Runnable release;

		AfterTransaction(CountedHold hold, Runnable release) {
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
