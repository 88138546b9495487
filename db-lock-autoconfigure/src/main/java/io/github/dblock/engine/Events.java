package io.github.dblock.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.github.dblock.DbLockMode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The {@link LockListener}s of one engine, each told in turn; what one throws is logged and
 * goes no further.
 */
final class Events {

	private static final Log logger = LogFactory.getLog(Events.class);

	private final List<LockListener> listeners = new CopyOnWriteArrayList<>();

	void add(LockListener listener) {
		this.listeners.add(listener);
	}

	boolean remove(LockListener listener) {
		return this.listeners.remove(listener);
	}

	void acquired(String key, DbLockMode mode, long waitedNanos) {
		tell((listener) -> listener.acquired(key, mode, waitedNanos));
	}

	void notAcquired(String key, DbLockMode mode, LockListener.Outcome outcome, long waitedNanos) {
		tell((listener) -> listener.notAcquired(key, mode, outcome, waitedNanos));
	}

	void contended(String key, DbLockMode mode) {
		tell((listener) -> listener.contended(key, mode));
	}

	void released(String key, DbLockMode mode, long heldNanos) {
		tell((listener) -> listener.released(key, mode, heldNanos));
	}

	void lost(String key, DbLockMode mode) {
		tell((listener) -> listener.lost(key, mode));
	}

	void holdStarted(String key, DbLockMode mode, String owner, @Nullable Long token) {
		tell((listener) -> listener.holdStarted(key, mode, owner, token));
	}

	void holdEnded(String key, DbLockMode mode, String owner, boolean lost) {
		tell((listener) -> listener.holdEnded(key, mode, owner, lost));
	}

	void reaped(int rows) {
		tell((listener) -> listener.reaped(rows));
	}

	private void tell(Consumer<LockListener> event) {
		for (LockListener listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException | LinkageError ex) {
				logger.warn("Lock listener " + listener + " failed; the lock call goes on", ex);
			}
		}
	}

}
