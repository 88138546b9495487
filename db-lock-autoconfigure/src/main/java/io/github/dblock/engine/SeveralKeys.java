package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.dblock.DbLockException;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import org.jspecify.annotations.Nullable;

/**
 * Several keys taken at once ({@link LockEngine#acquireAll}): in the order of their keys,
 * within one wait, all or none; what a failed call took is given back at once.
 */
final class SeveralKeys {

	/** One key's acquisition through the engine. */
	@FunctionalInterface
	interface Acquisition {

		@Nullable LockHandle acquire(LockRequest request) throws InterruptedException;

	}

	private SeveralKeys() {
	}

	/**
	 * Takes the keys, checked already.
	 * @param requests one request per key; the first one's wait is the call's
	 * @param acquisition takes one key, or returns {@code null} when its wait ran out
	 * @return the handle of every key
	 */
	static LockHandle acquire(List<LockRequest> requests, Acquisition acquisition) {
		long start = System.nanoTime();
		List<LockRequest> ordered = ordered(requests);
		long deadline = start + requests.get(0).waitTime().toNanos();
		List<LockHandle> taken = new ArrayList<>(ordered.size());
		try {
			for (LockRequest request : ordered) {
				Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
				LockHandle handle = acquisition.acquire(request.withWait(left));
				if (handle == null) {
					LockAcquisitionException timedOut = new LockAcquisitionException(request.key(),
							Duration.ofNanos(System.nanoTime() - start));
					giveBack(taken, timedOut);
					throw timedOut;
				}
				taken.add(handle);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			DbLockException interrupted = new DbLockException("Interrupted while waiting for locks "
					+ ordered.stream().map(LockRequest::key).toList(), ex);
			giveBack(taken, interrupted);
			throw interrupted;
		}
		catch (LockAcquisitionException ex) {
			throw ex;
		}
		catch (RuntimeException | Error ex) {
			giveBack(taken, ex);
			throw ex;
		}
		return new MultiKeyHandle(taken);
	}

	/** The requests in the order of their keys, each key once. */
	private static List<LockRequest> ordered(List<LockRequest> requests) {
		if (requests.isEmpty()) {
			throw new DbLockException("Acquiring several keys at once needs at least one key");
		}
		Map<String, LockRequest> byKey = new TreeMap<>();
		for (LockRequest request : requests) {
			byKey.putIfAbsent(request.key(), request);
		}
		return new ArrayList<>(byKey.values());
	}

	/**
	 * Gives back the keys a failed acquisition took, at once even inside a transaction
	 * (the caller did no work under them); a release that fails is added to the failure.
	 */
	private static void giveBack(List<LockHandle> taken, Throwable failure) {
		CountedHold.givingBack(() -> {
			try {
				MultiKeyHandle.closeAll(taken);
			}
			catch (RuntimeException ex) {
				failure.addSuppressed(ex);
			}
		});
	}

}
