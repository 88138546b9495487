package io.github.dblock.benchmarks;

import java.util.List;

import io.github.dblock.benchmarks.contender.ContenderKind;
import org.jspecify.annotations.Nullable;

/**
 * One contender's result in one scenario.
 *
 * @param scenario the scenario
 * @param contender the contender
 * @param jvms how many JVMs ran it
 * @param threads threads per JVM
 * @param cycles completed acquire + release cycles in the measured window(s)
 * @param seconds the measured time
 * @param cyclesPerSecond throughput: the median of the rounds' (scenarios 1, 2, 4, 5), or
 * the cycles of the window per second (scenario 3)
 * @param p50Millis median cycle latency, waiting included
 * @param p99Millis 99th percentile cycle latency
 * @param statementsPerCycle the server's {@code Questions} delta per cycle
 * @param statementMix that delta by statement kind, per cycle
 * @param errors acquisitions that timed out or failed
 * @param firstError the first failure's message, if any
 * @param hotKey what only the hot-key scenario measures
 * @param local the cycles that never reached the database, apart (a key handed over
 * inside the JVM); the other fields count only cycles that did, except in the hot-key
 * scenario, whose cycles are the holds of the window
 */
record Measurement(Scenario scenario, ContenderKind contender, int jvms, int threads, long cycles, double seconds,
		double cyclesPerSecond, double p50Millis, double p99Millis, double statementsPerCycle, String statementMix, long errors,
		@Nullable String firstError, @Nullable HotKeyStats hotKey, LocalCycles local) {

	/**
	 * Same-key re-acquisitions that never reached the database: the acquisition sent no
	 * statement, the key was handed over by a thread of the same JVM that held it.
	 *
	 * @param cycles how many
	 * @param perSecond per second of the measured time
	 * @param p50Millis their median latency (acquire + release)
	 * @param p99Millis their 99th percentile
	 */
	record LocalCycles(long cycles, double perSecond, double p50Millis, double p99Millis) {

		static LocalCycles of(Outcome outcome, double seconds) {
			return new LocalCycles(outcome.localCycles(), outcome.localCycles() / seconds,
					Latencies.millis(outcome.localLatencies, 50), Latencies.millis(outcome.localLatencies, 99));
		}

	}

	/** "2x8": JVMs x threads. */
	String setup() {
		return this.jvms + "x" + this.threads;
	}

	/**
	 * What the hot-key scenario adds.
	 *
	 * @param utilisation time some thread held the lock / wall time
	 * @param handoffP50Millis median time from one holder's end to the next holder's start
	 * @param handoffP99Millis its 99th percentile
	 * @param statementsPerSecond every statement the server ran, per second
	 * @param waiterStatementsPerSecond those beyond the uncontended cost of the cycles done
	 * @param overlaps two holders at once: must be 0
	 * @param jvmCycles the acquisitions of each JVM in the window
	 */
	record HotKeyStats(double utilisation, double handoffP50Millis, double handoffP99Millis,
			double statementsPerSecond, double waiterStatementsPerSecond, long overlaps, List<Long> jvmCycles) {

		/** Each JVM's part of the acquisitions, e.g. "51% / 49%". */
		String shares() {
			long total = this.jvmCycles.stream().mapToLong(Long::longValue).sum();
			return this.jvmCycles.stream()
				.map((cycles) -> String.format("%.0f%%", (total > 0) ? 100.0 * cycles / total : 0.0))
				.collect(java.util.stream.Collectors.joining(" / "));
		}

		/** The smallest JVM's part of the acquisitions. */
		double smallestShare() {
			long total = this.jvmCycles.stream().mapToLong(Long::longValue).sum();
			return (total > 0) ? this.jvmCycles.stream().mapToLong(Long::longValue).min().orElse(0) / (double) total : 0;
		}

	}

}
