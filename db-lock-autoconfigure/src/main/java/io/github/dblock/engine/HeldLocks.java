package io.github.dblock.engine;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.github.dblock.DbLockContextHolder;
import io.github.dblock.LockHandle;
import io.github.dblock.jdbc.HeldRow;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

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

	/**
	 * The rows of the leases the current thread holds now: those of its open handles and
	 * those whose release waits for the current transaction to complete.
	 * @return the rows, each once, or an empty list
	 */
	public static List<HeldRow> rows() {
		Set<HeldRow> rows = new LinkedHashSet<>();
		for (LockHandle handle : DbLockContextHolder.all()) {
			if (handle instanceof Handle held) {
				add(rows, held.source().row());
			}
		}
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
				if (synchronization instanceof CountedHold.AfterTransaction deferred) {
					add(rows, deferred.hold.row());
				}
			}
		}
		return new ArrayList<>(rows);
	}

	private static void add(Set<HeldRow> rows, @Nullable HeldRow row) {
		if (row != null) {
			rows.add(row);
		}
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
