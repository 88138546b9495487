package io.github.dblock.benchmarks.contender;

import java.time.Duration;

import io.github.dblock.autoconfigure.DbLockProperties;
import io.github.dblock.engine.Backoff;

/**
 * The wait, lease and back-off every contender uses, so that they differ only in how
 * they lock.
 */
final class LockTimes {

	static final long WAIT_MS = 5_000;

	static final Duration WAIT = Duration.ofMillis(WAIT_MS);

	static final Duration LEASE = Duration.ofSeconds(30);

	/**
	 * db-lock's default back-off, or one capped at {@code DB_LOCK_BENCH_BACKOFF_MAX_MS}
	 * milliseconds (the first pause capped there too); the contenders without a wait of
	 * their own spin with it too.
	 */
	static final Backoff BACKOFF = defaultBackoff();

	private LockTimes() {
	}

	private static Backoff defaultBackoff() {
		DbLockProperties.Backoff defaults = new DbLockProperties().getBackoff();
		String max = System.getenv("DB_LOCK_BENCH_BACKOFF_MAX_MS");
		if (max == null || max.isBlank()) {
			return new Backoff(defaults.getInitial(), defaults.getMax());
		}
		Duration cap = Duration.ofMillis(Long.parseLong(max.trim()));
		return new Backoff((defaults.getInitial().compareTo(cap) < 0) ? defaults.getInitial() : cap, cap);
	}

}
