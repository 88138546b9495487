package io.github.dblock.scheduling;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The slot a time falls in, with fixed times: the nearest nominal fire time.
 */
class SlotScheduleTests {

	private static final Instant SLOT = Instant.parse("2026-11-27T20:00:05Z");

	@Test
	void aPeriodMapsTimesWithinHalfOfItToTheNearestMultiple() {
		SlotSchedule every5s = SlotSchedule.every(Duration.ofSeconds(5));
		// a node 2 s early and one 2 s late run the same slot
		assertThat(every5s.slotAt(SLOT.minusSeconds(2))).isEqualTo(SLOT);
		assertThat(every5s.slotAt(SLOT.plusSeconds(2))).isEqualTo(SLOT);
		assertThat(every5s.slotAt(SLOT)).isEqualTo(SLOT);
		assertThat(every5s.slotAt(SLOT.plusMillis(2499))).isEqualTo(SLOT);
		// past half the period: the neighbouring slots
		assertThat(every5s.slotAt(SLOT.minusMillis(2501))).isEqualTo(SLOT.minusSeconds(5));
		assertThat(every5s.slotAt(SLOT.plusMillis(2501))).isEqualTo(SLOT.plusSeconds(5));
		// a tie goes to the later slot, on every node alike
		assertThat(every5s.slotAt(SLOT.plusMillis(2500))).isEqualTo(SLOT.plusSeconds(5));
		assertThat(every5s.slotAt(SLOT.minusMillis(2500))).isEqualTo(SLOT);
	}

	@Test
	void theSlotsOfTheLastTwoGapsAreKeptWhateverTheRetention() {
		// a retention shorter than two periods would let a late call re-claim a deleted slot
		assertThat(SlotSchedule.every(Duration.ofSeconds(5)).retention(Duration.ofSeconds(1)))
			.isEqualTo(Duration.ofSeconds(10));
		assertThat(SlotSchedule.every(Duration.ofSeconds(5)).retention(Duration.ofDays(1))).isEqualTo(Duration.ofDays(1));
		// a nightly job with the default retention of a day: two days
		assertThat(SlotSchedule.cron("0 0 3 * * *", ZoneOffset.UTC).retention(Duration.ofDays(1)))
			.isEqualTo(Duration.ofDays(2));
		// weekdays only: the weekend's gap of three days, twice
		assertThat(SlotSchedule.cron("0 0 9 * * MON-FRI", ZoneOffset.UTC).retention(Duration.ofDays(1)))
			.isEqualTo(Duration.ofDays(6));
	}

	@Test
	void aPeriodIsAlignedToTheEpochWhateverItsLength() {
		SlotSchedule every7m = SlotSchedule.every(Duration.ofMinutes(7));
		Instant slot = every7m.slotAt(SLOT);
		assertThat(Duration.between(Instant.EPOCH, slot).toMinutes() % 7).isZero();
		assertThat(Duration.between(slot, SLOT).abs()).isLessThanOrEqualTo(Duration.ofSeconds(210));
		SlotSchedule every250us = SlotSchedule.every(Duration.ofNanos(250_000));
		assertThat(every250us.slotAt(Instant.parse("2026-11-27T20:00:00.000374Z")))
			.isEqualTo(Instant.parse("2026-11-27T20:00:00.000250Z"));
		assertThat(every250us.slotAt(Instant.parse("2026-11-27T20:00:00.000375Z")))
			.isEqualTo(Instant.parse("2026-11-27T20:00:00.000500Z"));
		// before the epoch too
		assertThat(SlotSchedule.every(Duration.ofSeconds(5)).slotAt(Instant.EPOCH.minusSeconds(7)))
			.isEqualTo(Instant.EPOCH.minusSeconds(5));
		assertThat(SlotSchedule.every(Duration.ofSeconds(5)).slotAt(Instant.EPOCH.minusMillis(7600)))
			.isEqualTo(Instant.EPOCH.minusSeconds(10));
	}

	@Test
	void aCronMapsATimeToItsNearestFireTime() {
		SlotSchedule every5s = SlotSchedule.cron("*/5 * * * * *", ZoneOffset.UTC);
		assertThat(every5s.slotAt(SLOT.minusSeconds(2))).isEqualTo(SLOT);
		assertThat(every5s.slotAt(SLOT.plusSeconds(2))).isEqualTo(SLOT);
		assertThat(every5s.slotAt(SLOT)).isEqualTo(SLOT);
		assertThat(every5s.slotAt(SLOT.plusMillis(2600))).isEqualTo(SLOT.plusSeconds(5));
		assertThat(every5s.slotAt(SLOT.minusMillis(2600))).isEqualTo(SLOT.minusSeconds(5));
	}

	@Test
	void aCronWithUnevenGapsMapsToTheNearerNeighbour() {
		// at 02:00 and 03:00 each day: half of the one-hour gap, or of the 23-hour one
		SlotSchedule twice = SlotSchedule.cron("0 0 2,3 * * *", ZoneOffset.UTC);
		assertThat(twice.slotAt(Instant.parse("2026-11-27T02:29:59Z"))).isEqualTo(Instant.parse("2026-11-27T02:00:00Z"));
		assertThat(twice.slotAt(Instant.parse("2026-11-27T02:30:01Z"))).isEqualTo(Instant.parse("2026-11-27T03:00:00Z"));
		assertThat(twice.slotAt(Instant.parse("2026-11-27T14:29:00Z"))).isEqualTo(Instant.parse("2026-11-27T03:00:00Z"));
		assertThat(twice.slotAt(Instant.parse("2026-11-27T14:31:00Z"))).isEqualTo(Instant.parse("2026-11-28T02:00:00Z"));
		assertThat(twice.slotAt(Instant.parse("2026-11-28T01:59:58Z"))).isEqualTo(Instant.parse("2026-11-28T02:00:00Z"));
	}

	@Test
	void aCronIsReadInItsZone() {
		// 09:00 in Paris is 08:00 UTC in November
		SlotSchedule nine = SlotSchedule.cron("0 0 9 * * *", ZoneId.of("Europe/Paris"));
		assertThat(nine.slotAt(Instant.parse("2026-11-27T07:59:58Z"))).isEqualTo(Instant.parse("2026-11-27T08:00:00Z"));
		assertThat(nine.slotAt(Instant.parse("2026-11-27T08:00:02Z"))).isEqualTo(Instant.parse("2026-11-27T08:00:00Z"));
	}

	@Test
	void aRareCronFindsItsLastFireTimeYearsBack() {
		// every 29 February: the last one in 2024, the next in 2028
		SlotSchedule leap = SlotSchedule.cron("0 0 0 29 2 *", ZoneOffset.UTC);
		assertThat(leap.slotAt(Instant.parse("2025-06-01T00:00:00Z"))).isEqualTo(Instant.parse("2024-02-29T00:00:00Z"));
		assertThat(leap.slotAt(Instant.parse("2027-06-01T00:00:00Z"))).isEqualTo(Instant.parse("2028-02-29T00:00:00Z"));
	}

	@Test
	void badSchedulesAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> SlotSchedule.every(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> SlotSchedule.every(Duration.ofSeconds(-1)));
		assertThatIllegalArgumentException().isThrownBy(() -> SlotSchedule.cron("* * *", ZoneOffset.UTC));
	}

}
