package io.github.dblock.benchmarks.contender;

import java.util.stream.Stream;

/**
 * One lock implementation under test, as the scenarios see it: take the lock of a key,
 * run a critical section, release the lock. Instances are shared by all threads of a run.
 */
public interface LockContender extends AutoCloseable {

	/**
	 * Runs a critical section while holding the lock of a key, waiting up to
	 * {@link LockTimes#WAIT} for it.
	 * @param key the lock key
	 * @param criticalSection runs while the lock is held
	 * @return whether the lock was acquired (and the section ran)
	 * @throws Exception if the lock implementation failed
	 */
	boolean runLocked(String key, Runnable criticalSection) throws Exception;

	/**
	 * Called before each run, outside the measured time, with every key the run may lock
	 * (and more): for a contender whose lock needs a row that exists beforehand. The
	 * stream is lazy; the default ignores it.
	 * @param keys the keys, possibly repeated
	 */
	default void prepareKeys(Stream<String> keys) {
	}

	/**
	 * Frees what the contender holds: Spring contexts, lifecycle beans. The data source
	 * belongs to the caller.
	 */
	@Override
	void close();

}
