package io.github.dblock.support;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.LockReleaseException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import io.github.dblock.LockRequest;
import org.jspecify.annotations.Nullable;

/**
 * {@link Lock} over one key of a {@link DbLockTemplate} in one mode, as returned by
 * {@link DbLockTemplate#obtain(String)} (the lease mode) and by the read and write locks of
 * {@link DbLockTemplate#readWriteLock(String)}. Every lock the template gives for one key acts as
 * one: what a thread locked through one, it may unlock through another, as users of
 * {@code LockRegistry.obtain} expect; no lock object is kept once its thread unlocked.
 * <p>
 * The methods of {@link Lock} take the key with the default lease, renewed by the watchdog
 * while held; {@link #lock(Duration)} and {@link #tryLock(Duration, Duration)} take it with a
 * fixed lease, which ends on time even if the holder still runs, and {@link #renew(Duration)}
 * extends the current thread's fixed lease.
 *
 * @since 0.1.0
 */
public final class DbLockLock implements Lock {

	/** Long enough to be forever, short enough that deadlines computed from it do not overflow. */
	private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE / 4);

	private final DbLockTemplate template;

	private final String key;

	private final DbLockMode mode;

	/** Each thread's handles by key, shared by every lock of the template. */
	private final ThreadLocal<Map<String, ArrayDeque<LockHandle>>> handles;

	/** Where this lock's handles are kept among the thread's: by mode and key. */
	private final String slot;

	DbLockLock(DbLockTemplate template, String key, DbLockMode mode,
			ThreadLocal<Map<String, ArrayDeque<LockHandle>>> handles) {
		this.template = template;
		this.key = key;
		this.mode = mode;
		this.handles = handles;
		this.slot = mode + ":" + key;
	}

	/**
	 * A read/write lock over one key: its read lock in the {@link DbLockMode#READ read mode},
	 * its write lock in the {@link DbLockMode#WRITE write mode}.
	 */
	static ReadWriteLock readWriteLock(DbLockTemplate template, String key,
			ThreadLocal<Map<String, ArrayDeque<LockHandle>>> handles) {
		DbLockLock read = new DbLockLock(template, key, DbLockMode.READ, handles);
		DbLockLock write = new DbLockLock(template, key, DbLockMode.WRITE, handles);
		return new ReadWriteLock() {

			@Override
			public Lock readLock() {
				return read;
			}

			@Override
			public Lock writeLock() {
				return write;
			}

			@Override
			public String toString() {
				return "DbLockReadWriteLock[" + key + "]";
			}

		};
	}

	private void push(LockHandle handle) {
		this.handles.get().computeIfAbsent(this.slot, (k) -> new ArrayDeque<>()).push(handle);
	}

	/**
	 * Acquires the lock with the default lease, renewed while held, waiting as long as it
	 * takes; an interrupt does not end the wait (the thread's interrupt flag is set again
	 * once the lock is held).
	 */
	@Override
	public void lock() {
		lockUninterruptibly(null);
	}

	/**
	 * Acquires the lock with a fixed lease, waiting as long as it takes, as {@link #lock()}
	 * does. A thread that already holds the key with a lease that ends sooner has it extended
	 * to {@code lease} from now; one that holds it with a renewed lease keeps that.
	 * @param lease the fixed lease, positive
	 * @throws io.github.dblock.DbLockException if the thread holds the key with a fixed lease
	 * and asks again without one (see {@link #lock()}): db-lock does not turn a fixed lease
	 * into a renewed one
	 */
	public void lock(Duration lease) {
		lockUninterruptibly(lease);
	}

	private void lockUninterruptibly(@Nullable Duration lease) {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					hold(acquire(FOREVER, lease));
					return;
				}
				catch (InterruptedException ex) {
					// lock() is not interruptible: keep waiting, set the flag again afterwards
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Acquires the lock with the default lease, renewed while held, waiting until it is
	 * free or the thread is interrupted.
	 * @throws InterruptedException if interrupted before the lock was acquired
	 */
	@Override
	public void lockInterruptibly() throws InterruptedException {
		hold(acquire(FOREVER, null));
	}

	/**
	 * Acquires the lock with the default lease, renewed while held, if no other owner holds
	 * it: one attempt, no wait.
	 * @return whether acquired
	 */
	@Override
	public boolean tryLock() {
		return this.template.engine()
			.tryAcquire(this.template.request(this.mode, this.key, Duration.ZERO, null, Duration.ZERO))
			.map((handle) -> {
				push(handle);
				return true;
			})
			.orElse(false);
	}

	/**
	 * Acquires the lock with the default lease, renewed while held, waiting at most the
	 * given time.
	 * @param time how long to wait; zero or less for one attempt
	 * @param unit the unit of {@code time}
	 * @return whether acquired
	 * @throws InterruptedException if interrupted before the lock was acquired
	 */
	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))), null);
	}

	/**
	 * Acquires the lock with a fixed lease, waiting at most {@code wait}; a thread that
	 * already holds the key is served as by {@link #lock(Duration)}.
	 * @param wait how long to wait; zero for one attempt
	 * @param lease the fixed lease, positive; {@code null} for the default lease, renewed
	 * while held
	 * @return whether acquired
	 * @throws InterruptedException if interrupted before the lock was acquired
	 */
	public boolean tryLock(Duration wait, @Nullable Duration lease) throws InterruptedException {
		LockHandle handle = acquire(wait.isNegative() ? Duration.ZERO : wait, lease);
		if (handle == null) {
			return false;
		}
		push(handle);
		return true;
	}

	/**
	 * Extends the current thread's fixed lease of this key to at least {@code lease} from
	 * the database's now, with one statement checked against its owner and token (none if
	 * that much is left already). A lease that is renewed by the watchdog stays as it is:
	 * the watchdog renews it. Nothing is acquired: a lease that may have ended is not
	 * renewed.
	 * @param lease the lease from now, positive; {@code null} for the default lease
	 * @return whether the thread holds the key, its lease renewed, when this returns
	 * @throws IllegalMonitorStateException if the thread does not hold the key through a lock
	 * of this template
	 */
	public boolean renew(@Nullable Duration lease) {
		LockHandle held = current();
		if (held == null) {
			throw new IllegalMonitorStateException("The current thread does not hold lock '" + this.key + "'"
					+ ((this.mode != DbLockMode.LEASE) ? " in the " + this.mode + " mode" : ""));
		}
		if (!held.isHeld()) {
			return false;
		}
		// a re-entry with a fixed lease extends a fixed lease that ends sooner, and is let go at once
		LockRequest request = this.template.request(this.mode, this.key, Duration.ZERO,
				(lease != null) ? lease : this.template.defaultLease(), Duration.ZERO);
		Optional<LockHandle> again = this.template.engine().tryAcquire(request);
		again.ifPresent(LockHandle::close);
		return again.isPresent() && held.isHeld();
	}

	/**
	 * The handle of the current thread's latest acquisition of this key that it has not
	 * unlocked yet, through this lock or another of the template for the same key and mode.
	 * @return the handle, or {@code null} if the thread does not hold the key this way
	 */
	public @Nullable LockHandle current() {
		ArrayDeque<LockHandle> held = this.handles.get().get(this.slot);
		if (held == null) {
			if (this.handles.get().isEmpty()) {
				this.handles.remove();
			}
			return null;
		}
		return held.peek();
	}

	/**
	 * Releases the lock this thread took last through this object.
	 * @throws IllegalMonitorStateException if the thread does not hold it
	 * @throws LockLostException if its lease was lost while held (per the lost-lease
	 * policy)
	 * @throws LockReleaseException if its release could not be confirmed: the key may stay
	 * taken until its lease ends. Thrown from a {@code finally} block, like any exception
	 * there, it takes the place of what the guarded code threw; catch it there to keep that
	 */
	@Override
	public void unlock() {
		Map<String, ArrayDeque<LockHandle>> byKey = this.handles.get();
		ArrayDeque<LockHandle> held = byKey.get(this.slot);
		LockHandle handle = (held != null) ? held.poll() : null;
		if (handle == null) {
			throw new IllegalMonitorStateException("The current thread does not hold lock '" + this.key + "'"
					+ ((this.mode != DbLockMode.LEASE) ? " in the " + this.mode + " mode" : ""));
		}
		if (held.isEmpty()) {
			byKey.remove(this.slot);
			if (byKey.isEmpty()) {
				this.handles.remove();
			}
		}
		this.template.release(handle, null);
	}

	/**
	 * Not supported.
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException("db-lock does not support conditions");
	}

	private @Nullable LockHandle acquire(Duration wait, @Nullable Duration lease) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException();
		}
		LockRequest request = this.template.request(this.mode, this.key, wait, lease, Duration.ZERO);
		return this.template.engine().acquireInterruptibly(request);
	}

	private void hold(@Nullable LockHandle handle) {
		if (handle == null) {
			throw new LockAcquisitionException(this.key, FOREVER);
		}
		push(handle);
	}

	/** Locks of one template on one key are equal: any of them unlocks what another locked. */
	@Override
	public boolean equals(Object other) {
		return other instanceof DbLockLock lock && lock.template == this.template && lock.slot.equals(this.slot);
	}

	@Override
	public int hashCode() {
		return this.slot.hashCode();
	}

	@Override
	public String toString() {
		return (this.mode != DbLockMode.LEASE) ? "DbLockLock[" + this.key + ", " + this.mode + "]"
				: "DbLockLock[" + this.key + "]";
	}

}
