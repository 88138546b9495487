package io.github.dblock.support;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.LockReleaseException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
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
 */
final class DbLockLock implements Lock {

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

	@Override
	public void lock() {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					hold(acquire(FOREVER));
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

	@Override
	public void lockInterruptibly() throws InterruptedException {
		hold(acquire(FOREVER));
	}

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

	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		LockHandle handle = acquire(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
		if (handle == null) {
			return false;
		}
		push(handle);
		return true;
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

	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException("db-lock does not support conditions");
	}

	private @Nullable LockHandle acquire(Duration wait) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException();
		}
		LockRequest request = this.template.request(this.mode, this.key, wait, null, Duration.ZERO);
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
