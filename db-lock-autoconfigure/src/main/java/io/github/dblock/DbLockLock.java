package io.github.dblock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.github.dblock.core.LockRequest;
import org.jspecify.annotations.Nullable;

/**
 * {@link Lock} over one key of a {@link DbLockTemplate}, as returned by
 * {@link DbLockTemplate#obtain(String)}.
 */
final class DbLockLock implements Lock {

	/** Long enough to be forever, short enough that deadlines computed from it do not overflow. */
	private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE / 4);

	private final DbLockTemplate template;

	private final String key;

	private final ThreadLocal<ArrayDeque<LockHandle>> held = ThreadLocal.withInitial(ArrayDeque::new);

	DbLockLock(DbLockTemplate template, String key) {
		this.template = template;
		this.key = key;
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
			.tryAcquire(this.template.request(this.key, Duration.ZERO, null, Duration.ZERO))
			.map((handle) -> {
				this.held.get().push(handle);
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
		this.held.get().push(handle);
		return true;
	}

	@Override
	public void unlock() {
		ArrayDeque<LockHandle> handles = this.held.get();
		LockHandle handle = handles.poll();
		if (handle == null) {
			throw new IllegalMonitorStateException("The current thread does not hold lock '" + this.key + "'");
		}
		if (handles.isEmpty()) {
			this.held.remove();
		}
		handle.close();
		this.template.checkNotLost(handle, null);
	}

	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException("db-lock does not support conditions");
	}

	private @Nullable LockHandle acquire(Duration wait) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException();
		}
		LockRequest request = this.template.request(this.key, wait, null, Duration.ZERO);
		return this.template.engine().acquireInterruptibly(request);
	}

	private void hold(@Nullable LockHandle handle) {
		if (handle == null) {
			throw new LockAcquisitionException(this.key, FOREVER);
		}
		this.held.get().push(handle);
	}

	@Override
	public String toString() {
		return "DbLockLock[" + this.key + "]";
	}

}
