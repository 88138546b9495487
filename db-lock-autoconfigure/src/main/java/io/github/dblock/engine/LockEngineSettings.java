package io.github.dblock.engine;

import java.time.Duration;

import io.github.dblock.LockChecks;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link LockEngine} waits, renews and shares a key between nodes.
 *
 * @param backoff the pauses between attempts on a key another owner holds
 * @param renewInterval how often the watchdog renews a renewed lease; {@code null} for a
 * third of the lease. Must be shorter than every renewed lease
 * @param localTurn the longest this JVM passes a held key from one of its threads to the
 * next while another JVM asks for it: when a turn is over and another JVM's attempt is
 * recent, the key goes back to the database and this JVM's next thread holds back for a
 * moment (see {@link #holdBack()}) so that the other JVM gets it
 * @since 0.1.0
 */
public record LockEngineSettings(Backoff backoff, @Nullable Duration renewInterval, Duration localTurn) {

	/** The local turn unless said otherwise. */
	public static final Duration DEFAULT_LOCAL_TURN = Duration.ofMillis(200);

	/**
	 * Checks the settings.
	 * @throws IllegalArgumentException for a renewal interval or a local turn that is not
	 * positive
	 */
	public LockEngineSettings {
		if (renewInterval != null && (renewInterval.isNegative() || renewInterval.isZero())) {
			throw new IllegalArgumentException("The renewal interval (db-lock.watchdog.interval) must be positive, got "
					+ LockChecks.format(renewInterval));
		}
		if (localTurn.isNegative() || localTurn.isZero()) {
			throw new IllegalArgumentException("The local turn (db-lock.local-turn) must be positive, got "
					+ LockChecks.format(localTurn));
		}
	}

	/**
	 * Settings with a back-off, renewal every third of a lease and the default local turn.
	 * @param backoff the pauses between attempts
	 * @return the settings
	 */
	public static LockEngineSettings of(Backoff backoff) {
		return new LockEngineSettings(backoff, null, DEFAULT_LOCAL_TURN);
	}

	/**
	 * These settings with another renewal interval.
	 * @param interval the interval; {@code null} for a third of the lease
	 * @return the settings
	 */
	public LockEngineSettings withRenewInterval(@Nullable Duration interval) {
		return new LockEngineSettings(this.backoff, interval, this.localTurn);
	}

	/**
	 * These settings with another local turn.
	 * @param turn the turn
	 * @return the settings
	 */
	public LockEngineSettings withLocalTurn(Duration turn) {
		return new LockEngineSettings(this.backoff, this.renewInterval, turn);
	}

	/**
	 * How recent another JVM's attempt must be to end a turn: two of its longest pauses, so
	 * that a JVM still waiting is always seen (it asks at least once per pause) and one that
	 * gave up is soon forgotten.
	 * @return the time
	 */
	public Duration wantedWithin() {
		return this.backoff.max().multipliedBy(2);
	}

	/**
	 * How long the next thread of this JVM holds back after its JVM gave a key up at the end
	 * of a turn: longer than another JVM's longest pause, so that one of its attempts comes
	 * first.
	 * @return the time
	 */
	public Duration holdBack() {
		return this.backoff.max().plus(this.backoff.max().dividedBy(2));
	}

	/**
	 * The renewal period of a renewed lease.
	 * @param lease the lease
	 * @return the period
	 * @throws io.github.dblock.DbLockException if the renewal interval is not shorter than
	 * the lease
	 */
	Duration renewalPeriod(Duration lease) {
		if (this.renewInterval == null) {
			return third(lease);
		}
		if (this.renewInterval.compareTo(lease) >= 0) {
			throw new io.github.dblock.DbLockException("A renewed lease of " + LockChecks.format(lease)
					+ " cannot be renewed every " + LockChecks.format(this.renewInterval)
					+ ": the renewal interval must be shorter than the lease");
		}
		return this.renewInterval;
	}

	/**
	 * How often a queued request's ticket is renewed: a renewed lease as any renewed lease;
	 * a fixed one, which must last while it waits, at the renewal interval if it is shorter
	 * than the lease, else at a third of the lease.
	 * @param request the request
	 * @return the period
	 * @throws io.github.dblock.DbLockException if a renewed lease is not longer than the
	 * renewal interval
	 */
	Duration ticketRenewalPeriod(io.github.dblock.LockRequest request) {
		if (request.renewed()) {
			return renewalPeriod(request.lease());
		}
		Duration interval = this.renewInterval;
		return (interval != null && interval.compareTo(request.lease()) < 0) ? interval : third(request.lease());
	}

	/**
	 * A third of a duration; in nanoseconds where it has them ({@link Duration#dividedBy(long)}
	 * divides in {@code BigDecimal}, a cost on every acquisition).
	 */
	private static Duration third(Duration duration) {
		return (duration.getSeconds() < Long.MAX_VALUE / 1_000_000_000L - 1) ? Duration.ofNanos(duration.toNanos() / 3)
				: duration.dividedBy(3);
	}

}
