package io.github.dblock.benchmarks.contender;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Waiting for locks that cannot wait themselves (ShedLock, the raw INSERT): the caller
 * repeats the attempt, pausing with {@link LockTimes#BACKOFF} as db-lock does, until
 * {@link LockTimes#WAIT} runs out.
 */
final class SpinWait {

	private SpinWait() {
	}

	static <T> @Nullable T until(Callable<@Nullable T> attempt) throws Exception {
		long deadline = System.nanoTime() + LockTimes.WAIT.toNanos();
		for (int failed = 0;; failed++) {
			T acquired = attempt.call();
			if (acquired != null) {
				return acquired;
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return null;
			}
			TimeUnit.NANOSECONDS.sleep(Math.min(LockTimes.BACKOFF.delayNanos(failed), remaining));
		}
	}

}
