package io.github.dblock.benchmarks;

import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.benchmarks.contender.ContenderKind;
import io.github.dblock.benchmarks.contender.LockContender;

/**
 * Scenarios 1, 2 and 4 in this JVM: a fresh pool and contender, a warm-up on keys of its
 * own, then the measured window bracketed by two reads of the server's counters.
 */
final class ThroughputRun {

	private final BenchSettings settings;

	private final ServerStatus status;

	private final String runId;

	ThroughputRun(BenchSettings settings, ServerStatus status, String runId) {
		this.settings = settings;
		this.status = status;
		this.runId = runId;
	}

	Measurement measure(Scenario scenario, ContenderKind kind) throws Exception {
		try (HikariDataSource pool = this.settings.openPool("bench-" + kind.name());
				LockContender contender = kind.create(pool, true)) {
			String prefix = this.runId + "-s" + scenario.number;
			window(new CycleLoop(contender, scenario.threads, scenario.keys(prefix + "w"), 0), this.settings.warmup());
			CycleLoop measured = new CycleLoop(contender, scenario.threads, scenario.keys(prefix), 0);
			ServerStatus.Snapshot before = this.status.snapshot();
			Outcome outcome = window(measured, this.settings.measure());
			ServerStatus.Snapshot after = this.status.snapshot();
			long cycles = outcome.cycles();
			return new Measurement(scenario, kind, 1, scenario.threads, cycles, this.settings.measure().toNanos() / 1e9,
					outcome.latencies.percentileMillis(0.5), outcome.latencies.percentileMillis(0.99),
					(cycles > 0) ? before.questionsUntil(after) / (double) cycles : Double.NaN,
					before.mixUntil(after, cycles), outcome.errors, outcome.firstError, null);
		}
	}

	private static Outcome window(CycleLoop loop, Duration length) throws InterruptedException {
		long start = System.nanoTime() + Duration.ofMillis(20).toNanos();
		return loop.run(start, start + length.toNanos());
	}

}
