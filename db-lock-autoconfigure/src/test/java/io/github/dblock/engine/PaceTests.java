package io.github.dblock.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Pace}: the back-off's pauses, cut where a turn after this JVM's cede ends, and the
 * back-off started again from there.
 */
class PaceTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	/** Back-off 5 to 100 ms, turn 200 ms: the hold-back after a cede is 150 ms. */
	private final LockEngineSettings settings = LockEngineSettings.of(new Backoff(Duration.ofMillis(5),
			Duration.ofMillis(100)));

	@Test
	void withoutACedeThePausesAreTheBackOffs() {
		Pace pace = new Pace(this.settings);
		long now = 1_000 * MS;
		long[] caps = { 5, 10, 20, 40, 80, 100, 100, 100 };
		for (long cap : caps) {
			long pause = pace.pauseNanos(now);
			assertThat(pause).isBetween(cap * MS / 2, cap * MS);
			now += pause;
		}
	}

	@Test
	void afterACedeNoPauseRunsPastTheOtherTurnsEarliestEndAndTheBackOffStartsAgainThere() {
		long cededAt = 1_000 * MS;
		long heldBackUntil = cededAt + this.settings.holdBack().toNanos();
		long turnEnd = cededAt + this.settings.localTurn().toNanos();
		Pace pace = new Pace(this.settings);
		pace.heldBackUntil(heldBackUntil);
		long now = heldBackUntil;
		int cut = 0;
		while (now < turnEnd) {
			long pause = pace.pauseNanos(now);
			assertThat(now + pause).isLessThanOrEqualTo(turnEnd);
			if (now + pause == turnEnd) {
				cut++;
			}
			now += pause;
		}
		assertThat(cut).isEqualTo(1);
		// from the turn's end: the first pause, then growing again
		assertThat(pace.pauseNanos(now)).isBetween(5 * MS / 2, 5 * MS);
		assertThat(pace.pauseNanos(now + 5 * MS)).isBetween(10 * MS / 2, 10 * MS);
	}

	@Test
	void theSameHoldBackToldAgainDoesNotStartTheBackOffAgain() {
		long heldBackUntil = 1_000 * MS;
		Pace pace = new Pace(this.settings);
		pace.heldBackUntil(heldBackUntil);
		long now = heldBackUntil + this.settings.localTurn().toNanos();
		assertThat(pace.pauseNanos(now)).isBetween(5 * MS / 2, 5 * MS);
		pace.heldBackUntil(heldBackUntil);
		assertThat(pace.pauseNanos(now)).isBetween(10 * MS / 2, 10 * MS);
		// a new cede does
		pace.heldBackUntil(now);
		assertThat(pace.pauseNanos(now + this.settings.localTurn().toNanos())).isBetween(5 * MS / 2, 5 * MS);
	}

	@Test
	void aTurnThatEndedBeforeTheHoldBackChangesNothing() {
		// a hold-back longer than the turn (a long back-off): the back-off as it is
		LockEngineSettings longBackoff = LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(400)));
		Pace pace = new Pace(longBackoff);
		long heldBackUntil = 1_000 * MS;
		pace.heldBackUntil(heldBackUntil);
		long now = heldBackUntil;
		long[] caps = { 5, 10, 20, 40 };
		for (long cap : caps) {
			long pause = pace.pauseNanos(now);
			assertThat(pause).isBetween(cap * MS / 2, cap * MS);
			now += pause;
		}
	}

}
