package io.github.dblock;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LockChecks#format(Duration)}.
 */
class LockChecksTests {

	@Test
	void wholeUnitsAreWrittenAsAPropertyIs() {
		assertThat(LockChecks.format(Duration.ofSeconds(2))).isEqualTo("2s");
		assertThat(LockChecks.format(Duration.ofMillis(500))).isEqualTo("500ms");
		assertThat(LockChecks.format(Duration.ofMinutes(1))).isEqualTo("1m");
		assertThat(LockChecks.format(Duration.ofHours(3))).isEqualTo("3h");
		assertThat(LockChecks.format(Duration.ofDays(7))).isEqualTo("7d");
		assertThat(LockChecks.format(Duration.ZERO)).isEqualTo("0s");
	}

	@Test
	void mixedUnitsAreWrittenLargestFirst() {
		assertThat(LockChecks.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
		assertThat(LockChecks.format(Duration.ofHours(1).plusSeconds(5))).isEqualTo("1h5s");
		assertThat(LockChecks.format(Duration.ofDays(2).plusHours(12))).isEqualTo("2d12h");
		assertThat(LockChecks.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
		assertThat(LockChecks.format(Duration.ofMillis(60_250))).isEqualTo("1m0.25s");
		assertThat(LockChecks.format(Duration.ofMillis(2_001))).isEqualTo("2.001s");
	}

	@Test
	void fractionsAreRoundedToTheUnitShown() {
		// two thirds of a second, as the renewal margin of a 1s lease
		assertThat(LockChecks.format(Duration.ofNanos(666_666_667))).isEqualTo("667ms");
		assertThat(LockChecks.format(Duration.ofNanos(333_333_333))).isEqualTo("333ms");
		assertThat(LockChecks.format(Duration.ofNanos(999_600_000))).isEqualTo("1s");
		assertThat(LockChecks.format(Duration.ofNanos(1_333_334))).isEqualTo("1ms");
	}

	@Test
	void durationsBelowAMillisecondKeepTheirSize() {
		assertThat(LockChecks.format(Duration.ofNanos(250_000))).isEqualTo("250us");
		assertThat(LockChecks.format(Duration.ofNanos(40))).isEqualTo("40ns");
		assertThat(LockChecks.format(Duration.ofNanos(999_999))).isEqualTo("1ms");
	}

	@Test
	void negativeDurationsHaveALeadingMinus() {
		assertThat(LockChecks.format(Duration.ofSeconds(-5))).isEqualTo("-5s");
		assertThat(LockChecks.format(Duration.ofMillis(-1))).isEqualTo("-1ms");
	}

}
