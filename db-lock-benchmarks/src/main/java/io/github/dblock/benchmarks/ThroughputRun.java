package io.github.dblock.benchmarks;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.benchmarks.contender.ContenderKind;
import io.github.dblock.benchmarks.contender.LockContender;

/**
 * Scenarios 1, 2 and 4 in this JVM, in rounds that the contenders take in turns, so that a
 * passing disturbance of the machine (another process's burst of CPU or disk) falls on a
 * round rather than on one contender: each round a fresh pool and contender, a warm-up on
 * keys of its own (in the first round until the JIT is quiet, {@link JitWarmUp}; a short one
 * in later rounds), then a
 * measured window bracketed by two reads of the pool's statement counters (on PostgreSQL,
 * of the client's count, {@link StatementTally}). Throughput is the median of the rounds'.
 */
final class ThroughputRun {

	private final BenchSettings settings;

	private final String runId;

	ThroughputRun(BenchSettings settings, String runId) {
		this.settings = settings;
		this.runId = runId;
	}

	/** The longest warm-up of a first round ({@link JitWarmUp}). */
	static final Duration MAX_WARMUP = Duration.ofSeconds(10);

	/** The warm-up of later rounds: the code is compiled by then, the pool and caches are new. */
	private static final Duration REWARM = Duration.ofMillis(300);

	/**
	 * The keys prepared for a window, for a contender that needs its rows beforehand, are
	 * those of this many cycles per thread and second, for one second more than the window:
	 * twice what the transaction-bound cycles (four round trips) reach on one thread.
	 */
	static final int MAX_CYCLES_PER_THREAD_AND_SECOND = 10_000;

	/** Measures one round of a scenario for a contender. */
	Outcome round(Scenario scenario, ContenderKind kind, int round) throws Exception {
		try (HikariDataSource pool = this.settings.openPool("bench-" + kind.name());
				LockContender contender = kind.create(StatementTally.counting(pool), true)) {
			// keys of their own for each contender: db-lock's modes share their key table
			String prefix = this.runId + "-s" + scenario.number + "r" + round + "c" + kind.ordinal();
			Duration measure = this.settings.measure().dividedBy(this.settings.rounds());
			if (round == 1) {
				// the first round of a contender and scenario: until the JIT is quiet
				JitWarmUp.run(new JitWarmUp.Window() {

					@Override
					public void prepare(int index, Duration length) {
						contender.prepareKeys(keys(scenario, prefix + "w" + index, length));
					}

					@Override
					public void run(int index, Duration length) throws Exception {
						window(new CycleLoop(contender, scenario.threads, scenario.keys(prefix + "w" + index), 0), length);
					}

				}, this.settings.warmup(), MAX_WARMUP);
			}
			else {
				Duration warmup = min(REWARM, this.settings.warmup());
				contender.prepareKeys(keys(scenario, prefix + "w", warmup));
				window(new CycleLoop(contender, scenario.threads, scenario.keys(prefix + "w"), 0), warmup);
			}
			contender.prepareKeys(keys(scenario, prefix, measure));
			CycleLoop measured = new CycleLoop(contender, scenario.threads, scenario.keys(prefix), 0);
			if (this.settings.postgresql()) {
				// no server counter of a session's statements: the client's count, this JVM's only
				long before = StatementTally.all();
				Outcome outcome = window(measured, measure);
				outcome.statements = StatementCounts.counted(StatementTally.all() - before);
				return outcome;
			}
			StatementCounts before = StatementCounts.read(pool, this.settings.poolSize());
			Outcome outcome = window(measured, measure);
			outcome.statements = StatementCounts.read(pool, this.settings.poolSize()).since(before);
			return outcome;
		}
	}

	static Measurement measurement(Scenario scenario, ContenderKind kind, List<Outcome> rounds) {
		Outcome outcome = new Outcome(0);
		double[] rates = new double[rounds.size()];
		for (int i = 0; i < rates.length; i++) {
			outcome.add(rounds.get(i), false);
			rates[i] = rounds.get(i).databaseCycles() / rounds.get(i).seconds();
		}
		Arrays.sort(rates);
		double median = (rates[(rates.length - 1) / 2] + rates[rates.length / 2]) / 2;
		long cycles = outcome.databaseCycles();
		return new Measurement(scenario, kind, 1, scenario.threads, cycles, outcome.seconds(), median,
				Latencies.millis(outcome.latencies, 50), Latencies.millis(outcome.latencies, 99),
				(cycles > 0) ? outcome.statements.questions() / (double) cycles : Double.NaN,
				outcome.statements.mixPerCycle(cycles), outcome.errors, outcome.firstError, null,
				Measurement.LocalCycles.of(outcome, outcome.seconds()));
	}

	/** Every key a window of this length may lock, and more (lazily: most contenders never look). */
	private static Stream<String> keys(Scenario scenario, String prefix, Duration length) {
		KeyScheme keys = scenario.keys(prefix);
		long cycles = MAX_CYCLES_PER_THREAD_AND_SECOND * (length.toMillis() + 1000) / 1000;
		return IntStream.range(0, scenario.threads)
			.boxed()
			.flatMap((thread) -> LongStream.range(0, cycles).mapToObj((cycle) -> keys.key(thread, cycle)));
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static Outcome window(CycleLoop loop, Duration length) throws InterruptedException {
		long start = System.nanoTime() + Duration.ofMillis(20).toNanos();
		return loop.run(start, start + length.toNanos());
	}

}
