package io.github.dblock.engine;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dblock.DbLockContextHolder;
import io.github.dblock.LockHandle;

/**
 * A handle listed among the acquiring thread's {@link HeldLocks} until closed; closing it
 * twice counts down once. Each mode's handle extends it.
 */
abstract class ListedHandle implements LockHandle {

	private final AtomicBoolean open = new AtomicBoolean(true);

	/** The acquiring thread's handles, in which this one is listed until closed. */
	private final DbLockContextHolder.Entry context;

	ListedHandle() {
		this.context = HeldLocks.push(this);
	}

	/**
	 * Whether it has not been closed.
	 * @return whether open
	 */
	final boolean isOpen() {
		return this.open.get();
	}

	@Override
	public final void close() {
		if (this.open.compareAndSet(true, false)) {
			HeldLocks.remove(this.context, this);
			closed();
		}
	}

	/** Counts its hold down, once. */
	abstract void closed();

	@Override
	public String toString() {
		return "LockHandle[key=" + key() + ", expiresAt=" + expiresAt() + "]";
	}

}
