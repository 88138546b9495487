package io.github.dblock;

import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The lock handles each thread has acquired and not closed, innermost last: the lock
 * engine lists a handle when it hands it out and removes it when it is closed;
 * {@link DbLockContext} reads them. A handle closed by another thread leaves the list of
 * the thread that acquired it. For lock engines: application code reads
 * {@link DbLockContext}.
 *
 * @since 0.1.0
 */
public final class DbLockContextHolder {

	private static final ThreadLocal<Deque<Entry>> handles = new ThreadLocal<>();

	private DbLockContextHolder() {
	}

	/**
	 * Lists a handle the current thread has acquired.
	 * @param handle the handle
	 * @return its entry, to remove when the handle is closed
	 */
	public static Entry add(LockHandle handle) {
		Deque<Entry> held = handles.get();
		if (held == null) {
			held = new ConcurrentLinkedDeque<>();
			handles.set(held);
		}
		Entry entry = new Entry(handle, held);
		held.addLast(entry);
		return entry;
	}

	/**
	 * The innermost handle the current thread holds.
	 * @return the handle, or empty outside a lock
	 */
	public static Optional<LockHandle> innermost() {
		Deque<Entry> held = handles.get();
		if (held == null) {
			return Optional.empty();
		}
		for (Iterator<Entry> it = held.descendingIterator(); it.hasNext();) {
			Entry entry = it.next();
			if (entry.listed) {
				return Optional.of(entry.handle);
			}
		}
		return Optional.empty();
	}

	/**
	 * The handles the current thread holds, outermost first.
	 * @return the handles, or an empty list outside a lock
	 */
	public static List<LockHandle> all() {
		Deque<Entry> held = handles.get();
		if (held == null) {
			return List.of();
		}
		List<LockHandle> open = new ArrayList<>();
		for (Entry entry : held) {
			if (entry.listed) {
				open.add(entry.handle);
			}
		}
		return open;
	}

	/**
	 * A handle listed among those of the thread that acquired it.
	 *
	 * @since 0.1.0
	 */
	public static final class Entry {

		private final LockHandle handle;

		private final Deque<Entry> list;

		private volatile boolean listed = true;

		private Entry(LockHandle handle, Deque<Entry> list) {
			this.handle = handle;
			this.list = list;
		}

		/**
		 * Removes the handle from the list of the thread that acquired it, from any thread;
		 * removing it again does nothing.
		 */
		public void remove() {
			this.listed = false;
			this.list.removeLastOccurrence(this);
			if (this.list.isEmpty() && handles.get() == this.list) {
				handles.remove();
			}
		}

	}

}
