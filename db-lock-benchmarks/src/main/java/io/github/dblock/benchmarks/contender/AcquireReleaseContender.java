package io.github.dblock.benchmarks.contender;

import org.jspecify.annotations.Nullable;

/**
 * A contender with separate acquire and release calls, run as acquire, critical section,
 * release.
 *
 * @param <H> what an acquisition returns and its release needs
 */
abstract class AcquireReleaseContender<H> implements LockContender {

	@Override
	public final boolean runLocked(String key, Runnable criticalSection) throws Exception {
		H held = acquire(key);
		if (held == null) {
			return false;
		}
		try {
			criticalSection.run();
		}
		finally {
			release(key, held);
		}
		return true;
	}

	/**
	 * Acquires the lock of a key, waiting up to {@link LockTimes#WAIT}.
	 * @param key the key
	 * @return the acquisition, or {@code null} if the wait ran out
	 * @throws Exception if the lock implementation failed
	 */
	abstract @Nullable H acquire(String key) throws Exception;

	/**
	 * Releases an acquisition.
	 * @param key the key
	 * @param held what {@link #acquire} returned
	 * @throws Exception if the lock implementation failed
	 */
	abstract void release(String key, H held) throws Exception;

	@Override
	public void close() {
	}

}
