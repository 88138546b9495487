package io.github.dblock.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.dblock.benchmarks.contender.ContenderKind;

/**
 * Runs every scenario against every contender, then the {@link Curves}, prints the tables
 * and writes them under the results folder (the first argument, default {@code results}).
 * The database and the durations come from the environment, see {@link BenchSettings}; for
 * a partial run, {@code DB_LOCK_BENCH_CONTENDERS} (e.g. {@code DB_LOCK,RAW_INSERT_DELETE}),
 * {@code DB_LOCK_BENCH_SCENARIOS} (e.g. {@code 1,3}, or {@code none}) and
 * {@code DB_LOCK_BENCH_CURVES} (e.g. {@code threads,reaper}, or {@code none}) narrow it
 * down. On PostgreSQL the side-by-side contenders run with its DDL and
 * {@code pg_advisory_lock} for {@code GET_LOCK}, statements counted on the client, and the
 * tables go to {@code latest-postgresql.*}.
 */
public final class BenchmarkMain {

	/** db-lock's hot-key configurations: the waiters' statements must follow JVMs, not threads. */
	private static final int[][] DB_LOCK_HOT_KEY_SETUPS = { { 1, 8 }, { 1, 16 }, { 2, 4 }, { 2, 8 } };

	private BenchmarkMain() {
	}

	/**
	 * Runs the benchmark.
	 * @param args the results folder, optional
	 * @throws Exception if the database cannot be reached or a contender fails to start
	 */
	public static void main(String[] args) throws Exception {
		Path results = Path.of((args.length > 0) ? args[0] : "results");
		BenchSettings settings = BenchSettings.fromEnvironment();
		List<ContenderKind> contenders = contenders();
		Set<Integer> scenarios = scenarios();
		String runId = "r" + Long.toString(System.currentTimeMillis(), 36);
		List<Measurement> measurements = new ArrayList<>();
		Machine machine = Machine.describe(settings);
		System.out.println("db-lock benchmark on " + settings.url() + ": " + machine.summary());
		ContenderKind.labelFor(settings.postgresql());
		ThroughputRun throughput = new ThroughputRun(settings, runId);
		for (Scenario scenario : Scenario.THROUGHPUT) {
			if (scenarios.contains(scenario.number)) {
				Map<ContenderKind, List<Outcome>> outcomes = new EnumMap<>(ContenderKind.class);
				for (int round = 1; round <= settings.rounds(); round++) {
					for (ContenderKind kind : contenders) {
						if (!kind.runsIn(scenario.number)) {
							continue;
						}
						outcomes.computeIfAbsent(kind, (k) -> new ArrayList<>()).add(throughput.round(scenario, kind, round));
					}
				}
				outcomes.forEach((kind, rounds) -> measurements.add(progress(ThroughputRun.measurement(scenario, kind, rounds))));
			}
		}
		if (scenarios.contains(Scenario.HOT_KEY.number)) {
			HotKeyRun hotKey = new HotKeyRun(settings, runId);
			for (ContenderKind kind : contenders) {
				if (!kind.runsIn(Scenario.HOT_KEY.number)) {
					continue;
				}
				int[][] setups = (kind == ContenderKind.DB_LOCK) ? DB_LOCK_HOT_KEY_SETUPS : new int[][] { { 2, 8 } };
				for (int[] setup : setups) {
					measurements.add(progress(hotKey.measure(kind, setup[0], setup[1])));
				}
			}
		}
		if (!measurements.isEmpty()) {
			new Report(machine.finished(), settings, measurements, Targets.evaluate(measurements)).write(results);
			System.out.println("Written: " + results.toAbsolutePath().normalize().resolve(Report.baseName(settings)
					+ ".{md,csv,png}"));
		}
		Curves curves = new Curves(settings, runId + "c");
		Machine curvesMachine = Machine.describe(settings);
		List<Curve> measured = curves.run();
		if (!measured.isEmpty()) {
			new CurveReport(curvesMachine.finished(), settings, measured, curves.full()).write(results);
			System.out.println("Written: " + results.toAbsolutePath().normalize().resolve("curves-"
					+ settings.databaseName() + ".{md,csv}") + " and the curves' PNGs");
		}
		System.exit(0);
	}

	private static Measurement progress(Measurement m) {
		Measurement.HotKeyStats hot = m.hotKey();
		System.out.printf("  %-40s %-17s %-5s %7.0f cycles/s  p50 %6.2f ms  p99 %7.2f ms  %5.2f statements/cycle%s%s%n",
				m.scenario().label(), m.contender().label(), m.setup(), m.cyclesPerSecond(), m.p50Millis(),
				m.p99Millis(), m.statementsPerCycle(),
				(hot != null) ? String.format("  utilisation %.1f%%, hand-off p50 %.2f ms", 100 * hot.utilisation(),
						hot.handoffP50Millis()) : "",
				(m.errors() > 0) ? "  " + m.errors() + " errors" : "");
		return m;
	}

	private static List<ContenderKind> contenders() {
		String names = System.getenv("DB_LOCK_BENCH_CONTENDERS");
		if (names == null || names.isBlank()) {
			return List.of(ContenderKind.values());
		}
		return Arrays.stream(names.split(",")).map(String::trim).map(ContenderKind::valueOf).toList();
	}

	private static Set<Integer> scenarios() {
		String numbers = System.getenv().getOrDefault("DB_LOCK_BENCH_SCENARIOS", "1,2,3,4,5");
		if (numbers.isBlank() || numbers.trim().equals("none")) {
			return Set.of();
		}
		return Arrays.stream(numbers.split(",")).map(String::trim).map(Integer::valueOf).collect(Collectors.toSet());
	}

}
