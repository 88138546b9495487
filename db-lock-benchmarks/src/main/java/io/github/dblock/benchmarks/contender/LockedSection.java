package io.github.dblock.benchmarks.contender;

import io.github.dblock.DbLock;

/**
 * The bean whose {@link DbLock} method the annotation contender calls through its Spring
 * proxy.
 */
public class LockedSection {

	/**
	 * Runs a critical section under the lock {@code bench:<key>}.
	 * @param key the lock key
	 * @param criticalSection the section
	 */
	@DbLock(name = "bench", key = "#key", waitMs = LockTimes.WAIT_MS, leaseMs = LockTimes.LEASE_MS)
	public void run(String key, Runnable criticalSection) {
		criticalSection.run();
	}

}
