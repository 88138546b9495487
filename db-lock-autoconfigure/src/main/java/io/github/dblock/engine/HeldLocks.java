package io.github.dblock.engine;

import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;

import io.github.dblock.LockHandle;

/**
 * The handles the current thread has acquired and not closed, innermost last; read
 * through {@link io.github.dblock.DbLockContext}. A handle closed by another thread leaves
 * the list of the thread that acquired it.
 */
public final class HeldLocks {

	private static final ThreadLocal<Deque<ListedHandle>> handles = new ThreadLocal<>();

	private HeldLocks() {
	}

	/**
	 * The innermost handle the current thread holds.
	 * @return the handle, or empty outside a lock
	 */
	public static Optional<LockHandle> innermost() {
		Deque<ListedHandle> held = handles.get();
		if (held == null) {
			return Optional.empty();
		}
		for (Iterator<ListedHandle> it = held.descendingIterator(); it.hasNext();) {
			ListedHandle handle = it.next();
			if (handle.isOpen()) {
				return Optional.of(handle);
			}
		}
		return Optional.empty();
	}

	/**
	 * The handles the current thread holds, outermost first.
	 * @return the open handles, or an empty list outside a lock
	 */
	public static List<LockHandle> all() {
		Deque<ListedHandle> held = handles.get();
		if (held == null) {
			return List.of();
		}
		List<LockHandle> open = new ArrayList<>();
		for (ListedHandle handle : held) {
			if (handle.isOpen()) {
				open.add(handle);
			}
		}
		return open;
	}

	/** Lists a new handle of the current thread; returns the list, to remove it from. */
	static Deque<ListedHandle> push(ListedHandle handle) {
		Deque<ListedHandle> held = handles.get();
		if (held == null) {
			held = new ConcurrentLinkedDeque<>();
			handles.set(held);
		}
		held.addLast(handle);
		return held;
	}

	/** Removes a closed handle from the list of the thread that acquired it. */
	static void remove(Deque<ListedHandle> held, ListedHandle handle) {
		held.removeLastOccurrence(handle);
		if (held.isEmpty() && handles.get() == held) {
			handles.remove();
		}
	}

}
