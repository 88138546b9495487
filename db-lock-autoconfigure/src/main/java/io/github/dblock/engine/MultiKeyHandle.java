package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;

/**
 * A handle of several keys ({@link LockEngine#acquireAll}): one handle per key, taken in key
 * order; it holds while every one of them holds, and closing it closes them all, the last
 * taken first.
 */
final class MultiKeyHandle implements LockHandle {

	private final List<LockHandle> handles;

	private final AtomicBoolean open = new AtomicBoolean(true);

	MultiKeyHandle(List<LockHandle> handles) {
		this.handles = List.copyOf(handles);
	}

	/** The first key in key order. */
	@Override
	public String key() {
		return this.handles.get(0).key();
	}

	@Override
	public List<String> keys() {
		return this.handles.stream().map(LockHandle::key).toList();
	}

	/** The token of the first key in key order; {@link #fencingToken(String)} gives each. */
	@Override
	public long fencingToken() {
		return this.handles.get(0).fencingToken();
	}

	@Override
	public long fencingToken(String key) {
		for (LockHandle handle : this.handles) {
			if (handle.key().equals(key)) {
				return handle.fencingToken();
			}
		}
		throw new IllegalArgumentException("This handle holds " + keys() + ", not '" + key + "'");
	}

	/** The earliest end of its keys' leases. */
	@Override
	public Instant expiresAt() {
		Instant earliest = Instant.MAX;
		for (LockHandle handle : this.handles) {
			Instant end = handle.expiresAt();
			if (end.isBefore(earliest)) {
				earliest = end;
			}
		}
		return earliest;
	}

	/** Whether every key is still held. */
	@Override
	public boolean isHeld() {
		if (!this.open.get()) {
			return false;
		}
		for (LockHandle handle : this.handles) {
			if (!handle.isHeld()) {
				return false;
			}
		}
		return true;
	}

	/** The least time left among its keys: the handle is held while every key is. */
	@Override
	public Duration remaining() {
		if (!this.open.get()) {
			return Duration.ZERO;
		}
		Duration least = FOREVER;
		for (LockHandle handle : this.handles) {
			Duration left = handle.remaining();
			if (left.compareTo(least) < 0) {
				least = left;
			}
		}
		return least;
	}

	/** The earliest loss among its keys: the handle is lost if any key is. */
	@Override
	public Optional<Instant> lostSince() {
		Instant earliest = null;
		for (LockHandle handle : this.handles) {
			Instant lost = handle.lostSince().orElse(null);
			if (lost != null && (earliest == null || lost.isBefore(earliest))) {
				earliest = lost;
			}
		}
		return Optional.ofNullable(earliest);
	}

	/**
	 * Releases every key, the last taken first; a release that could not be confirmed does
	 * not stop the others, and the first is thrown once all are closed, the others added
	 * to it as suppressed.
	 */
	@Override
	public void close() {
		if (this.open.compareAndSet(true, false)) {
			closeAll(this.handles);
		}
	}

	/**
	 * Closes handles, the last first, all of them even if some fail.
	 * @param handles the handles
	 * @throws LockReleaseException the first release that could not be confirmed
	 */
	static void closeAll(List<LockHandle> handles) {
		RuntimeException failure = null;
		for (int i = handles.size() - 1; i >= 0; i--) {
			LockHandle handle = handles.get(i);
			try {
				handle.close();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	@Override
	public String toString() {
		return "LockHandle[keys=" + keys() + ", expiresAt=" + expiresAt() + "]";
	}

}
