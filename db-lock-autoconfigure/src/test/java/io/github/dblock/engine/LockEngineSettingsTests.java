package io.github.dblock.engine;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The renewal periods {@link LockEngineSettings} derives from a lease. */
class LockEngineSettingsTests {

	private final LockEngineSettings settings = LockEngineSettings
		.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50)));

	@Test
	void withoutARenewalIntervalALeaseIsRenewedEveryThirdOfIt() {
		assertThat(this.settings.renewalPeriod(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(10));
		assertThat(this.settings.renewalPeriod(Duration.ofNanos(10))).isEqualTo(Duration.ofNanos(3));
		assertThat(this.settings.renewalPeriod(Duration.ofMillis(1000)))
			.isEqualTo(Duration.ofMillis(1000).dividedBy(3));
	}

	@Test
	void aLeaseTooLongForNanosecondsIsDividedAsADuration() {
		Duration centuries = Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L + 10);
		assertThat(this.settings.renewalPeriod(centuries)).isEqualTo(centuries.dividedBy(3));
	}

	@Test
	void aRenewalIntervalShorterThanTheLeaseIsTaken() {
		assertThat(this.settings.withRenewInterval(Duration.ofSeconds(2)).renewalPeriod(Duration.ofSeconds(30)))
			.isEqualTo(Duration.ofSeconds(2));
	}

}
