package io.github.dblock.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.support.DbLockTemplate;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A ShedLock lock over one db-lock handle, used by the thread that took it. Its unlock
 * releases the handle; its extension takes the key once more on that thread, which extends
 * the fixed lease of the hold the thread has (the fencing token stays), and hands back a
 * lock over the new handle. Once unlocked or extended, it refuses both, as ShedLock's
 * contract says; an extension that failed leaves it as it was, to be unlocked.
 */
final class DbLockSimpleLock implements SimpleLock {

	private static final Log logger = LogFactory.getLog(DbLockSimpleLock.class);

	private final LockHandle handle;

	private final LockEngine engine;

	private final DbLockTemplate template;

	private final Thread thread = Thread.currentThread();

	private final AtomicBoolean active = new AtomicBoolean(true);

	DbLockSimpleLock(LockHandle handle, LockEngine engine, DbLockTemplate template) {
		this.handle = handle;
		this.engine = engine;
		this.template = template;
	}

	/**
	 * Releases the lock: the key is free when this returns, or, before the minimum hold has
	 * passed, taken until it has.
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 * @throws io.github.dblock.LockLostException if the lease was lost while held, unless
	 * {@code db-lock.on-lost-lease} is {@code log}
	 * @throws io.github.dblock.LockReleaseException if the release could not be confirmed
	 * (the key stays taken until the lease ends)
	 */
	@Override
	public void unlock() {
		deactivate("unlocked");
		this.template.release(this.handle, null);
	}

	/**
	 * Extends the fixed lease to {@code lockAtMostFor} from now (the database's now), on the
	 * thread that took the lock; a lease that already ends later is kept as it is, never
	 * shortened. The minimum hold stays the one the lock was taken with, counted from its
	 * acquisition: {@code lockAtLeastFor} is not used.
	 * @param lockAtMostFor the lease from now, positive
	 * @param lockAtLeastFor not used
	 * @return a lock over the same hold and fencing token, to be unlocked in place of this
	 * one; empty if the lease may have ended (this lock is then still to be unlocked, which
	 * reports the loss) or if called from another thread
	 * @throws IllegalStateException if this lock was already unlocked or extended
	 */
	@Override
	public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
		if (!this.active.get()) {
			throw new IllegalStateException("ShedLock lock '" + this.handle.key() + "' was already unlocked or extended");
		}
		if (Thread.currentThread() != this.thread || !this.handle.isHeld()) {
			return Optional.empty();
		}
		LockRequest again = new LockRequest(this.handle.key(), Duration.ZERO, lockAtMostFor, false, Duration.ZERO);
		Optional<LockHandle> taken = this.engine.tryAcquire(again);
		if (taken.isEmpty()) {
			return Optional.empty();
		}
		LockHandle extended = taken.get();
		if (extended.fencingToken() != this.handle.fencingToken()) {
			// the lease had ended and the key was taken afresh: not an extension, given back at once
			try {
				extended.close();
			}
			catch (RuntimeException ex) {
				logger.warn("Could not give back lock '" + extended.key() + "' taken afresh by a failed extension", ex);
			}
			return Optional.empty();
		}
		deactivate("extended");
		// the hold now has two handles: closing this one leaves it held by the new one
		this.handle.close();
		return Optional.of(new DbLockSimpleLock(extended, this.engine, this.template));
	}

	private void deactivate(String how) {
		if (!this.active.compareAndSet(true, false)) {
			throw new IllegalStateException("ShedLock lock '" + this.handle.key() + "' was already unlocked or extended; "
					+ "it cannot be " + how + " again");
		}
	}

	@Override
	public String toString() {
		return "DbLockSimpleLock[" + this.handle + "]";
	}

}
