package io.github.dblock.engine;

import java.util.List;
import java.util.Optional;

import io.github.dblock.DbLockContextHolder;
import io.github.dblock.LockHandle;

/**
 * The handles the current thread has acquired and not closed, innermost last, kept in the
 * API's {@link DbLockContextHolder} and read through {@link io.github.dblock.DbLockContext}.
 * A handle closed by another thread leaves the list of the thread that acquired it.
 *
 * @since 0.1.0
 */
public final class HeldLocks {

	private HeldLocks() {
	}

	/**
	 * The innermost handle the current thread holds.
	 * @return the handle, or empty outside a lock
	 */
	public static Optional<LockHandle> innermost() {
		return DbLockContextHolder.innermost();
	}

	/**
	 * The handles the current thread holds, outermost first.
	 * @return the open handles, or an empty list outside a lock
	 */
	public static List<LockHandle> all() {
		return DbLockContextHolder.all();
	}

	/** Lists a new handle of the current thread; returns its entry, to remove it by. */
	static DbLockContextHolder.Entry push(Handle handle) {
		return DbLockContextHolder.add(handle);
	}

	/** Removes a closed handle from the list of the thread that acquired it. */
	static void remove(DbLockContextHolder.Entry held, Handle handle) {
		held.remove();
	}

}
