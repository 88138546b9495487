package io.github.dblock.benchmarks.contender;

import io.github.dblock.DbLock;

/**
 * The bean whose {@link DbLock} method the annotation contender calls through its Spring
 * proxy. Wait and lease are the configured defaults ({@code db-lock.default-wait} and
 * {@code db-lock.default-lease}, set to {@link LockTimes}), as the template contender's
 * are: a lease renewed while held, the usage db-lock recommends.
 */
public class LockedSection {

	/**
	 * Runs a critical section under the lock {@code bench:<key>}.
	 * @param key the lock key
	 * @param criticalSection the section
	 */
	@DbLock(name = "bench", key = "#key")
	public void run(String key, Runnable criticalSection) {
		criticalSection.run();
	}

}
