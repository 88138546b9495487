package io.github.dblock.core;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Optional;

import io.github.dblock.LockHandle;

/**
 * The handles the current thread has acquired and not closed, innermost last; read
 * through {@link io.github.dblock.DbLockContext}.
 */
public final class HeldLocks {

	private static final ThreadLocal<ArrayDeque<LockEngine.Handle>> handles = ThreadLocal.withInitial(ArrayDeque::new);

	private HeldLocks() {
	}

	/**
	 * The innermost handle the current thread holds.
	 * @return the handle, or empty outside a lock
	 */
	public static Optional<LockHandle> innermost() {
		ArrayDeque<LockEngine.Handle> held = handles.get();
		// a handle closed by another thread is still in this thread's list: skip it
		for (Iterator<LockEngine.Handle> it = held.descendingIterator(); it.hasNext();) {
			LockEngine.Handle handle = it.next();
			if (handle.isOpen()) {
				return Optional.of(handle);
			}
			it.remove();
		}
		return Optional.empty();
	}

	static void push(LockEngine.Handle handle) {
		handles.get().addLast(handle);
	}

	static void remove(LockEngine.Handle handle) {
		ArrayDeque<LockEngine.Handle> held = handles.get();
		held.removeLastOccurrence(handle);
		if (held.isEmpty()) {
			handles.remove();
		}
	}

}
