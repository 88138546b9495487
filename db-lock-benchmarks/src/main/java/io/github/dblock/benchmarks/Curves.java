package io.github.dblock.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import io.github.dblock.benchmarks.contender.ContenderKind;
import io.github.dblock.benchmarks.contender.LockContender;
import io.github.dblock.maintenance.LockReaper;
import io.github.dblock.testsupport.GaleraCluster;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How db-lock's cost grows with work, on the database of the settings (MariaDB, MySQL or
 * PostgreSQL): against threads in one JVM, against JVMs, against the lock table's size,
 * against the leases one JVM holds (the watchdog), the reaper, and on a Galera cluster the run
 * starts (MariaDB, where Galera is installed). Each curve is a list of
 * points measured one after the other; {@code -Dbench.full} adds the long points (64
 * threads, 4 JVMs, 10^6 rows). {@code DB_LOCK_BENCH_CURVES} (e.g. {@code threads,reaper},
 * or {@code none}; {@code galera} runs only when named) chooses the curves, {@code DB_LOCK_BENCH_CURVE_SECONDS} (2) the measured
 * time of a point. The held-leases and reaper curves are measured by {@link LeaseCurves}; the
 * small helpers that measure and print a point ({@link #window}, {@link #local},
 * {@link #progress}, {@link #analyse}) are shared with it from here.
 */
final class Curves {

	/** All the curves, in the order they run. */
	static final List<String> ALL = List.of("threads", "jvms", "table-size", "held-leases", "reaper", "galera");

	/** Galera's library, from Debian's {@code galera-4}: the galera curve runs where it is installed. */
	static final Path GALERA = Path.of("/usr/lib/galera/libgalera_smm.so");

	/** Members of the galera curve's cluster. */
	static final int GALERA_MEMBERS = 3;

	/** Threads in the JVM curve's worker JVMs. */
	static final int JVM_THREADS = 8;

	/** Keys of the shared pool of the threads curve. */
	static final int SHARED_KEYS = 16;

	private final BenchSettings settings;

	private final String runId;

	private final boolean full;

	private final Duration point;

	private final Set<String> chosen;

	private final LeaseCurves leases;

	Curves(BenchSettings settings, String runId) {
		this.settings = settings;
		this.runId = runId;
		this.full = Boolean.getBoolean("bench.full") || Boolean.parseBoolean(System.getenv("DB_LOCK_BENCH_FULL"));
		Map<String, String> env = System.getenv();
		this.point = Duration.ofMillis(Math.round(1000 * Double.parseDouble(env.getOrDefault("DB_LOCK_BENCH_CURVE_SECONDS", "2"))));
		// the galera curve starts a cluster of its own: asked for by name
		String names = env.getOrDefault("DB_LOCK_BENCH_CURVES", String.join(",", ALL.subList(0, ALL.size() - 1)));
		this.chosen = Arrays.stream(names.split(",")).map(String::trim).collect(Collectors.toSet());
		this.leases = new LeaseCurves(settings, runId, this.full, this.point);
	}

	boolean full() {
		return this.full;
	}

	Duration point() {
		return this.point;
	}

	/** Runs the chosen curves. */
	List<Curve> run() throws Exception {
		List<Curve> curves = new ArrayList<>();
		for (String name : ALL) {
			if (!this.chosen.contains(name)) {
				continue;
			}
			long start = System.nanoTime();
			System.out.println("Curve " + name + (this.full ? " (full)" : ""));
			Curve curve = switch (name) {
				case "threads" -> threads();
				case "jvms" -> jvms();
				case "table-size" -> tableSize();
				case "held-leases" -> this.leases.heldLeases();
				case "reaper" -> this.leases.reaper();
				case "galera" -> galera();
				default -> throw new IllegalStateException(name);
			};
			curve.seconds = (System.nanoTime() - start) / 1e9;
			curves.add(curve);
		}
		return curves;
	}

	// ---- a Galera cluster

	/**
	 * The threads curve on a 3-member Galera cluster the run starts on loopback (the tests'
	 * {@link GaleraCluster}), connections spread over every member: throughput, and the
	 * certification conflicts per cycle (conflicts between members, which db-lock retries as
	 * attempts that did not acquire). Runs with a MariaDB URL where Galera is installed; the
	 * cluster is torn down after.
	 */
	private Curve galera() throws Exception {
		int[] counts = this.full ? new int[] { 1, 4, 16, 32 } : new int[] { 1, 4, 16 };
		Curve curve = new Curve("galera", "A " + GALERA_MEMBERS + "-member Galera cluster",
				"threads in one JVM (connections spread over " + GALERA_MEMBERS + " members)",
				"A MariaDB Galera cluster of " + GALERA_MEMBERS + " members started by the run on loopback (galera-4, "
						+ "state transfer by rsync), reached through jdbc:mariadb:loadbalance: (each connection to one "
						+ "member); db-lock's DbLockTemplate, acquire + release, nothing held; a new key every cycle, or "
						+ "a key drawn at random from a shared pool of " + SHARED_KEYS + ". Certification conflicts are "
						+ "the members' wsrep_local_cert_failures + wsrep_local_bf_aborts during the point.");
		if (this.settings.postgresql() || !Files.isReadable(GALERA)) {
			curve.growth = "not run: it needs a MariaDB URL and Galera (" + GALERA + ")";
			return curve;
		}
		try (GaleraCluster cluster = GaleraCluster.start(GALERA_MEMBERS)) {
			BenchSettings onCluster = this.settings.withDatabase(cluster.url(), cluster.user(), "");
			threadPoints(curve, onCluster, counts, "g", (values, cycles, measure) -> {
				long conflicts = cluster.certificationConflicts();
				measure.run();
				conflicts = cluster.certificationConflicts() - conflicts;
				values.put("certification conflicts/cycle", (cycles.getAsLong() > 0) ? conflicts / (double) cycles.getAsLong()
						: Double.NaN);
			});
		}
		curve.chart("Galera: database cycles/s against threads", "cycles/s", true, "database cycles/s");
		curve.chart("Galera: certification conflicts per cycle", "conflicts/cycle", true,
				"certification conflicts/cycle");
		curve.growth = "new key: throughput " + curve.growthOf("new key every cycle", "database cycles/s")
				+ ", certification conflicts/cycle " + curve.growthOf("new key every cycle", "certification conflicts/cycle")
				+ "; shared pool: throughput " + curve.growthOf("pool of " + SHARED_KEYS + " keys", "database cycles/s")
				+ ", certification conflicts/cycle "
				+ curve.growthOf("pool of " + SHARED_KEYS + " keys", "certification conflicts/cycle");
		return curve;
	}

	/** What a threads-like curve measures around each point beside the common values. */
	@FunctionalInterface
	private interface PointExtra {

		void measure(Map<String, Double> values, java.util.function.LongSupplier databaseCycles, ThrowingRunnable point)
				throws Exception;

	}

	@FunctionalInterface
	private interface ThrowingRunnable {

		void run() throws Exception;

	}

	/**
	 * The points of a curve against threads in one JVM, on a database: a new key every cycle,
	 * then a key drawn from a shared pool of {@value #SHARED_KEYS}; cycles/s, acquire and cycle
	 * latencies and errors, and what {@code extra} measures around the point.
	 */
	private void threadPoints(Curve curve, BenchSettings on, int[] counts, String tag, PointExtra extra)
			throws Exception {
		for (boolean shared : new boolean[] { false, true }) {
			String series = shared ? "pool of " + SHARED_KEYS + " keys" : "new key every cycle";
			try (CurveLocks locks = new CurveLocks(on, on.poolSize())) {
				LockContender contender = locks.contender();
				boolean first = true;
				for (int threads : counts) {
					String prefix = this.runId + "-" + tag + (shared ? "s" : "n") + threads;
					KeyScheme keys = shared
							? (thread, cycle) -> prefix + "-" + ThreadLocalRandom.current().nextInt(SHARED_KEYS)
							: KeyScheme.newEachCycle(prefix);
					window(new CycleLoop(contender, threads, shared ? keys : KeyScheme.newEachCycle(prefix + "w"), 0),
							first ? this.settings.warmup() : Duration.ofMillis(300));
					first = false;
					Outcome[] measured = new Outcome[1];
					Map<String, Double> values = new LinkedHashMap<>();
					values.put("database cycles/s", Double.NaN);
					values.put("acquire p50 ms", Double.NaN);
					values.put("acquire p99 ms", Double.NaN);
					values.put("cycle p50 ms", Double.NaN);
					values.put("cycle p99 ms", Double.NaN);
					extra.measure(values, () -> measured[0].databaseCycles(),
							() -> measured[0] = window(new CycleLoop(contender, threads, keys, 0), this.point));
					Outcome outcome = measured[0];
					double seconds = outcome.seconds();
					values.put("database cycles/s", outcome.databaseCycles() / seconds);
					values.put("acquire p50 ms", Latencies.millis(outcome.acquireLatencies, 50));
					values.put("acquire p99 ms", Latencies.millis(outcome.acquireLatencies, 99));
					values.put("cycle p50 ms", Latencies.millis(outcome.latencies, 50));
					values.put("cycle p99 ms", Latencies.millis(outcome.latencies, 99));
					values.put("errors", (double) outcome.errors);
					curve.add(series, threads, values, Map.of());
					local(curve, series, threads, outcome, seconds);
					progress(curve, series, threads, values);
				}
			}
		}
	}

	// ---- threads in one JVM

	private Curve threads() throws Exception {
		int[] counts = this.full ? new int[] { 1, 2, 4, 8, 16, 32, 64 } : new int[] { 1, 2, 4, 8, 16, 32 };
		Curve curve = new Curve("threads", "Threads in one JVM", "threads in one JVM (pool of "
				+ this.settings.poolSize() + " connections)",
				"db-lock's DbLockTemplate, acquire + release, nothing held; a new key every cycle, or a key drawn at "
						+ "random from a shared pool of " + SHARED_KEYS + " every cycle. Latency is the acquisition's "
						+ "(until held), of cycles that reached the database.");
		threadPoints(curve, this.settings, counts, "t", (values, cycles, measure) -> {
			long statements = StatementTally.all();
			measure.run();
			statements = StatementTally.all() - statements;
			values.put("statements/database cycle",
					(cycles.getAsLong() > 0) ? statements / (double) cycles.getAsLong() : Double.NaN);
		});
		curve.chart("Database cycles/s against threads", "cycles/s", true, "database cycles/s");
		curve.chart("Acquisition latency against threads", "ms", true, "acquire p50 ms", "acquire p99 ms");
		curve.growth = "new key: throughput " + curve.growthOf("new key every cycle", "database cycles/s")
				+ ", acquire p50 " + curve.growthOf("new key every cycle", "acquire p50 ms") + "; shared pool: throughput "
				+ curve.growthOf("pool of " + SHARED_KEYS + " keys", "database cycles/s") + ", acquire p50 "
				+ curve.growthOf("pool of " + SHARED_KEYS + " keys", "acquire p50 ms");
		return curve;
	}

	// ---- JVMs

	private Curve jvms() throws Exception {
		int most = this.full ? 4 : 3;
		Curve curve = new Curve("jvms", "JVMs", "JVMs x " + JVM_THREADS + " threads",
				"Worker JVMs started on the same class path, " + JVM_THREADS + " threads each, db-lock's DbLockTemplate "
						+ "(table bench_db_lock): on one hot key, each holder holding it 1 ms (utilisation = time held / "
						+ "wall time; hand-off = one holder's end to the next one's start; across JVMs = the next holder "
						+ "in another JVM), and on distinct keys (a key per thread, nothing held).");
		HotKeyRun run = new HotKeyRun(this.settings.withMeasure(this.point.plusSeconds(1)), this.runId + "-curve");
		for (int jvms = 1; jvms <= most; jvms++) {
			HotKeyRun.JvmsOutcome hot = run.run(ContenderKind.DB_LOCK, jvms, JVM_THREADS, false);
			HotKeyRun.Holds holds = HotKeyRun.holds(hot);
			Measurement.HotKeyStats stats = new Measurement.HotKeyStats(holds.utilisation(), 0, 0, 0, 0,
					holds.overlaps(), hot.jvmCycles());
			Map<String, Double> values = new LinkedHashMap<>();
			values.put("utilisation %", 100 * holds.utilisation());
			values.put("smallest JVM share %", 100 * stats.smallestShare());
			values.put("hand-off p50 ms", Latencies.millis(holds.handoffs(), 50));
			values.put("hand-off p99 ms", Latencies.millis(holds.handoffs(), 99));
			values.put("across JVMs p50 ms", Latencies.millis(holds.crossJvmHandoffs(), 50));
			values.put("across JVMs p99 ms", Latencies.millis(holds.crossJvmHandoffs(), 99));
			values.put("holds/s", holds.cycles() / hot.seconds());
			values.put("overlaps", (double) holds.overlaps());
			values.put("timeouts and errors", (double) hot.outcome().errors);
			curve.add("one hot key, 1 ms holds", jvms, values, Map.of("each JVM's share", stats.shares()));
			local(curve, "one hot key, 1 ms holds", jvms, hot.outcome(), hot.outcome().seconds());
			progress(curve, "one hot key", jvms, values);

			HotKeyRun.JvmsOutcome distinct = run.run(ContenderKind.DB_LOCK, jvms, JVM_THREADS, true);
			Measurement.HotKeyStats shares = new Measurement.HotKeyStats(0, 0, 0, 0, 0, 0, distinct.jvmCycles());
			Outcome outcome = distinct.outcome();
			Map<String, Double> own = new LinkedHashMap<>();
			own.put("database cycles/s", outcome.databaseCycles() / distinct.seconds());
			own.put("acquire p50 ms", Latencies.millis(outcome.acquireLatencies, 50));
			own.put("acquire p99 ms", Latencies.millis(outcome.acquireLatencies, 99));
			own.put("smallest JVM share %", 100 * shares.smallestShare());
			own.put("timeouts and errors", (double) outcome.errors);
			curve.add("distinct keys", jvms, own, Map.of("each JVM's share", shares.shares()));
			local(curve, "distinct keys", jvms, outcome, outcome.seconds());
			progress(curve, "distinct keys", jvms, own);
		}
		curve.chart("Hot key: utilisation and the smallest JVM's share", "%", false, "utilisation %",
				"smallest JVM share %");
		curve.chart("Hot key: hand-off latency", "ms", false, "hand-off p50 ms", "hand-off p99 ms", "across JVMs p50 ms",
				"across JVMs p99 ms");
		curve.chart("Distinct keys: database cycles/s", "cycles/s", false, "database cycles/s");
		curve.chart("Distinct keys: acquisition latency", "ms", false, "acquire p50 ms", "acquire p99 ms");
		curve.growth = "hot key: utilisation " + curve.growthOf("one hot key, 1 ms holds", "utilisation %")
				+ ", hand-off p50 " + curve.growthOf("one hot key, 1 ms holds", "hand-off p50 ms")
				+ "; distinct keys: throughput " + curve.growthOf("distinct keys", "database cycles/s") + ", acquire p50 "
				+ curve.growthOf("distinct keys", "acquire p50 ms");
		return curve;
	}

	// ---- the table's size

	private Curve tableSize() throws Exception {
		long[] sizes = this.full ? new long[] { 1_000, 10_000, 100_000, 1_000_000 } : new long[] { 1_000, 10_000, 100_000 };
		Curve curve = new Curve("table-size", "Rows in the lock table", "other live leases in the table",
				"Filler rows (other owners' leases, live for a day) written in bulk with one INSERT ... SELECT per "
						+ "100,000, the table analysed; then one thread, a new key every cycle (acquire + release), and "
						+ "a reaper pass that finds nothing expired (DELETE ... WHERE expires_at <= now, by the "
						+ "expiry index).");
		try (CurveLocks locks = new CurveLocks(this.settings, this.settings.poolSize())) {
			LockContender contender = locks.contender();
			LockReaper reaper = locks.reaper();
			locks.empty();
			long filled = 0;
			boolean first = true;
			for (long size : sizes) {
				long fillStart = System.nanoTime();
				locks.fill(this.runId + "-filler", filled, size, false);
				filled = size;
				analyse(this.settings, locks);
				double fillSeconds = (System.nanoTime() - fillStart) / 1e9;
				String prefix = this.runId + "-rows" + size;
				window(new CycleLoop(contender, 1, KeyScheme.newEachCycle(prefix + "w"), 0),
						first ? this.settings.warmup() : Duration.ofMillis(300));
				first = false;
				Outcome outcome = window(new CycleLoop(contender, 1, KeyScheme.newEachCycle(prefix), 0), this.point);
				long[] passes = new long[9];
				for (int i = 0; i < passes.length; i++) {
					long start = System.nanoTime();
					reaper.reap();
					passes[i] = System.nanoTime() - start;
				}
				Arrays.sort(passes);
				Map<String, Double> values = new LinkedHashMap<>();
				values.put("cycle p50 ms", Latencies.millis(outcome.latencies, 50));
				values.put("cycle p99 ms", Latencies.millis(outcome.latencies, 99));
				values.put("database cycles/s", outcome.databaseCycles() / outcome.seconds());
				values.put("reaper pass (nothing expired) ms", passes[passes.length / 2] / 1e6);
				values.put("rows", (double) locks.rows());
				values.put("fill s", fillSeconds);
				curve.add("", size, values, Map.of());
				progress(curve, "", size, values);
			}
			locks.empty();
		}
		curve.chart("Acquire + release latency against the table's size", "ms", true, "cycle p50 ms", "cycle p99 ms");
		curve.chart("A reaper pass that finds nothing expired", "ms", true, "reaper pass (nothing expired) ms");
		curve.growth = "acquire + release p50 " + curve.growthOf("", "cycle p50 ms") + ", p99 "
				+ curve.growthOf("", "cycle p99 ms") + "; reaper pass " + curve.growthOf("", "reaper pass (nothing expired) ms");
		return curve;
	}

	/** Updates the planner's statistics of the curves' lock table after a bulk fill. */
	static void analyse(BenchSettings settings, CurveLocks locks) {
		new JdbcTemplate(locks.pool).execute(settings.postgresql() ? "ANALYZE " + CurveLocks.TABLE
				: "ANALYZE TABLE " + CurveLocks.TABLE);
	}

	// ---- helpers

	/** Adds the local (not reaching the database) cycles of a point, if any, to the curve. */
	static void local(Curve curve, String series, double x, Outcome outcome, double seconds) {
		if (outcome.localCycles() > 0) {
			curve.localRows.add(new Curve.LocalRow(series, x, Measurement.LocalCycles.of(outcome, seconds),
					outcome.databaseCycles()));
		}
	}

	/** Runs the loop for {@code length}, starting 20 ms from now, and returns what it measured. */
	static Outcome window(CycleLoop loop, Duration length) throws InterruptedException {
		long start = System.nanoTime() + Duration.ofMillis(20).toNanos();
		return loop.run(start, start + length.toNanos());
	}

	/** Prints a measured point on one line. */
	static void progress(Curve curve, String series, double x, Map<String, Double> values) {
		System.out.println("  " + curve.id + " " + series + " " + Curve.format(x) + ": " + values.entrySet()
			.stream()
			.map((e) -> e.getKey() + " " + String.format("%.2f", e.getValue()))
			.collect(Collectors.joining(", ")));
	}

}
