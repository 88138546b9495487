package io.github.dblock.engine;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Capped exponential back-off with jitter between attempts to take a held lock: the
 * n-th pause is between half and all of {@code min(max, initial * 2^n)}, so that
 * waiters on several nodes spread out rather than poll in step.
 *
 * @param initial the first pause's upper bound
 * @param max the cap of every pause
 * @since 0.1.0
 */
public record Backoff(Duration initial, Duration max) {

	/**
	 * Creates a back-off.
	 * @param initial the first pause's upper bound, positive
	 * @param max the cap, at least {@code initial}
	 */
	public Backoff {
		if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
			throw new IllegalArgumentException(
					"Back-off needs 0 < initial <= max, got initial " + initial + " and max " + max);
		}
	}

	/**
	 * The pause before the next attempt.
	 * @param attempt how many attempts have failed before, from 0
	 * @return the pause in nanoseconds
	 */
	public long delayNanos(int attempt) {
		long cap = Math.min(this.max.toNanos(), this.initial.toNanos() << Math.min(attempt, 20));
		return cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1);
	}

}
