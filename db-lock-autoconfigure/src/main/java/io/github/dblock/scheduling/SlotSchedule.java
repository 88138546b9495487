package io.github.dblock.scheduling;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.support.CronExpression;

/**
 * The slots of a schedule, and the slot a time falls in: the nominal fire time nearest to
 * it (the later one on a tie). A cron schedule's slots are its fire times in its zone; a
 * fixed rate's or fixed delay's are the multiples of its period since the epoch.
 *
 * @since 0.1.0
 */
public final class SlotSchedule {

	/** How far back the last fire time of a cron is looked for: two leap-year cycles and a bit. */
	private static final Duration CRON_LOOKBACK = Duration.ofDays(366 * 8 + 2);

	private final @Nullable CronExpression cron;

	private final ZoneId zone;

	private final @Nullable Duration period;

	private final String description;

	/** The longest gap between two fire times, found on first use. */
	private volatile @Nullable Duration longestGap;

	private SlotSchedule(@Nullable CronExpression cron, ZoneId zone, @Nullable Duration period, String description) {
		this.cron = cron;
		this.zone = zone;
		this.period = period;
		this.description = description;
	}

	/**
	 * The slots of a cron expression, as Spring's {@code CronExpression} reads it.
	 * @param expression the expression
	 * @param zone the zone its fields are in
	 * @return the schedule
	 * @throws IllegalArgumentException if the expression does not parse
	 */
	public static SlotSchedule cron(String expression, ZoneId zone) {
		return new SlotSchedule(CronExpression.parse(expression), zone, null,
				"cron \"" + expression + "\" in " + zone);
	}

	/**
	 * The slots of a fixed period: its multiples since the epoch.
	 * @param period the period
	 * @return the schedule
	 * @throws IllegalArgumentException if the period is not positive
	 */
	public static SlotSchedule every(Duration period) {
		if (period.isNegative() || period.isZero()) {
			throw new IllegalArgumentException("A schedule's period must be positive, got " + period);
		}
		return new SlotSchedule(null, java.time.ZoneOffset.UTC, period, "every " + period);
	}

	/**
	 * The slot a time falls in: the fire time nearest to it, the later one on a tie.
	 * @param time a time of the database's clock
	 * @return the slot
	 * @throws IllegalStateException if a cron schedule has no fire time within eight years
	 * either side of the time
	 */
	public Instant slotAt(Instant time) {
		Duration period = this.period;
		if (period != null) {
			Duration sinceEpoch = Duration.between(Instant.EPOCH, time);
			long periods = sinceEpoch.dividedBy(period);
			Duration below = period.multipliedBy(periods);
			if (periods < 0 && below.compareTo(sinceEpoch) > 0) {
				// dividedBy truncates towards zero: before the epoch, step one period down
				periods--;
				below = period.multipliedBy(periods);
			}
			Duration past = sinceEpoch.minus(below);
			if (past.multipliedBy(2).compareTo(period) >= 0) {
				below = below.plus(period);
			}
			return Instant.EPOCH.plus(below);
		}
		CronExpression cron = this.cron;
		ZonedDateTime at = time.atZone(this.zone);
		ZonedDateTime next = cron.next(at);
		ZonedDateTime last = lastAtOrBefore(cron, at);
		if (last == null && next == null) {
			throw new IllegalStateException("The " + this.description + " has no fire time near " + time);
		}
		if (last == null) {
			return next.toInstant();
		}
		if (next == null) {
			return last.toInstant();
		}
		Duration sinceLast = Duration.between(last, at);
		Duration untilNext = Duration.between(at, next);
		return (sinceLast.compareTo(untilNext) < 0) ? last.toInstant() : next.toInstant();
	}

	/**
	 * The latest fire time at or before a time: the first fire time after a point looked
	 * for further and further back, then followed forward to the last before the time.
	 */
	private static @Nullable ZonedDateTime lastAtOrBefore(CronExpression cron, ZonedDateTime at) {
		for (Duration back = Duration.ofSeconds(1); back != null; back = further(back)) {
			ZonedDateTime candidate = cron.next(at.minus(back));
			if (candidate != null && !candidate.isAfter(at)) {
				ZonedDateTime following;
				while ((following = cron.next(candidate)) != null && !following.isAfter(at)) {
					candidate = following;
				}
				return candidate;
			}
		}
		return null;
	}

	/** Twice as far back, then {@link #CRON_LOOKBACK} itself, then {@code null}: no further. */
	private static @Nullable Duration further(Duration back) {
		if (back.equals(CRON_LOOKBACK)) {
			return null;
		}
		Duration doubled = back.multipliedBy(2);
		return (doubled.compareTo(CRON_LOOKBACK) < 0) ? doubled : CRON_LOOKBACK;
	}

	/**
	 * How long before a claimed slot its task's older slots are kept: the retention asked
	 * for, but at least twice the longest gap between two fire times of the schedule (for a
	 * cron, the longest over its next 1,000 fire times or the next 400 days, whichever
	 * comes first; found once), so that a call that maps to the slot before, while another
	 * instance claims the next, never finds it deleted and claims it again.
	 * @param retention the retention asked for
	 * @return the retention to use
	 */
	public Duration retention(Duration retention) {
		Duration gaps = this.longestGap;
		if (gaps == null) {
			gaps = longestGap();
			this.longestGap = gaps;
		}
		Duration kept = gaps.multipliedBy(2);
		return (kept.compareTo(retention) > 0) ? kept : retention;
	}

	private Duration longestGap() {
		Duration period = this.period;
		if (period != null) {
			return period;
		}
		CronExpression cron = this.cron;
		ZonedDateTime start = ZonedDateTime.now(this.zone);
		ZonedDateTime horizon = start.plusDays(400);
		Duration longest = Duration.ZERO;
		ZonedDateTime previous = cron.next(start);
		for (int i = 0; i < 1000 && previous != null && previous.isBefore(horizon); i++) {
			ZonedDateTime next = cron.next(previous);
			if (next == null) {
				break;
			}
			Duration gap = Duration.between(previous, next);
			if (gap.compareTo(longest) > 0) {
				longest = gap;
			}
			previous = next;
		}
		// a cron firing less than twice in the horizon: keep its slots for the whole horizon
		return longest.isZero() ? Duration.between(start, horizon) : longest;
	}

	/**
	 * The period of a fixed rate or fixed delay.
	 * @return the period, or {@code null} for a cron schedule
	 */
	public @Nullable Duration period() {
		return this.period;
	}

	@Override
	public String toString() {
		return this.description;
	}

}
