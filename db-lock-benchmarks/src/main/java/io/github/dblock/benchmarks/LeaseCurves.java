package io.github.dblock.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.dblock.LockHandle;
import io.github.dblock.benchmarks.contender.LockContender;
import io.github.dblock.maintenance.LockReaper;

/**
 * The {@link Curves} that grow with the leases in the database rather than with the callers:
 * against the leases one JVM holds, the watchdog's statements/s, the time its renewing thread
 * spends in statements, its CPU and the JVM's, the oldest renewal and the leases lost; and
 * against the expired rows to delete, one reaper run's time and rows/s, with the acquisitions of
 * {@value #REAPER_THREADS} threads while it runs against the same threads just before.
 */
final class LeaseCurves {

	/** Threads acquiring while the reaper runs. */
	static final int REAPER_THREADS = 4;

	/** The watchdog curve renews every second (a lease of ten): ten times the default's statements. */
	static final Duration WATCHDOG_RENEWAL = Duration.ofSeconds(1);

	static final Duration WATCHDOG_LEASE = Duration.ofSeconds(10);

	private final BenchSettings settings;

	private final String runId;

	private final boolean full;

	private final Duration point;

	/**
	 * @param settings the database and pool the curves run on
	 * @param runId the prefix of the keys the curves write
	 * @param full whether to add the long points (30,000 leases, 10^6 expired rows)
	 * @param point the measured time of a point
	 */
	LeaseCurves(BenchSettings settings, String runId, boolean full, Duration point) {
		this.settings = settings;
		this.runId = runId;
		this.full = full;
		this.point = point;
	}

	// ---- held leases: the watchdog

	/**
	 * The held-leases curve: one JVM holds each count of leases while its watchdog renews them every
	 * {@link #WATCHDOG_RENEWAL}, measured over the point's time plus 3 s.
	 */
	Curve heldLeases() throws Exception {
		int[] counts = this.full ? new int[] { 10, 100, 1_000, 10_000, 30_000 } : new int[] { 10, 100, 1_000, 10_000 };
		Curve curve = new Curve("held-leases", "Leases held by one JVM", "leases held and renewed by one JVM",
				"One JVM acquires the leases (distinct keys, on " + this.settings.poolSize() + " threads), holds them "
						+ "while its watchdog renews them every " + WATCHDOG_RENEWAL.toSeconds() + " s (lease "
						+ WATCHDOG_LEASE.toSeconds() + " s; the default renews a 30 s lease every 10 s, a tenth of "
						+ "this), measured over " + this.point.plusSeconds(3).toSeconds() + " s: the watchdog's "
						+ "statements/s, the time its renewing thread spent in statements (busy), the CPU of the "
						+ "watchdog's threads and of the whole JVM (of one core), and at the end the oldest renewal "
						+ "(now minus the latest renewal's start, from the lease's end in the database's time: the "
						+ "database runs on the same machine, so on the same clock; keeping up means at most the "
						+ "renewal interval and a sweep) and the leases lost.");
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
			.getOperatingSystemMXBean();
		Duration window = this.point.plusSeconds(3);
		for (int count : counts) {
			try (CurveLocks locks = new CurveLocks(this.settings, this.settings.poolSize(), WATCHDOG_LEASE,
					WATCHDOG_RENEWAL)) {
				List<LockHandle> held = acquireAll(locks, this.runId + "-held" + count, count);
				Thread.sleep(WATCHDOG_RENEWAL.toMillis());
				long statements = StatementTally.watchdog();
				long busy = StatementTally.watchdogNanos();
				long cpu = watchdogCpu(threads);
				long process = os.getProcessCpuTime();
				long start = System.nanoTime();
				Thread.sleep(window.toMillis());
				double seconds = (System.nanoTime() - start) / 1e9;
				statements = StatementTally.watchdog() - statements;
				busy = StatementTally.watchdogNanos() - busy;
				cpu = watchdogCpu(threads) - cpu;
				process = os.getProcessCpuTime() - process;
				long lost = held.stream().filter((handle) -> !handle.isHeld()).count();
				java.time.Instant now = java.time.Instant.now();
				double oldest = held.stream()
					.mapToDouble((handle) -> Duration.between(handle.expiresAt().minus(WATCHDOG_LEASE), now).toNanos() / 1e9)
					.max()
					.orElse(Double.NaN);
				releaseAll(held);
				double busyShare = busy / 1e9 / seconds;
				Map<String, Double> values = new LinkedHashMap<>();
				values.put("statements/s", statements / seconds);
				values.put("leases renewed/s", count / (double) WATCHDOG_RENEWAL.toSeconds());
				values.put("renewing thread busy %", 100 * busyShare);
				values.put("watchdog CPU %", 100 * cpu / 1e9 / seconds);
				values.put("JVM CPU %", 100 * process / 1e9 / seconds);
				values.put("oldest renewal s", oldest);
				values.put("lost", (double) lost);
				values.put("leases/s at 100% busy", (busyShare > 0) ? count / (double) WATCHDOG_RENEWAL.toSeconds() / busyShare
						: Double.NaN);
				curve.add("", count, values, Map.of());
				Curves.progress(curve, "", count, values);
			}
		}
		curve.chart("Watchdog statements/s against leases held", "statements/s", true, "statements/s");
		curve.chart("Watchdog: busy and CPU against leases held", "% of one core", true, "renewing thread busy %",
				"watchdog CPU %", "JVM CPU %");
		curve.growth = "statements/s " + curve.growthOf("", "statements/s") + ", renewing thread busy "
				+ curve.growthOf("", "renewing thread busy %") + ", watchdog CPU " + curve.growthOf("", "watchdog CPU %");
		return curve;
	}

	private static long watchdogCpu(ThreadMXBean threads) {
		long total = 0;
		for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
			if (info != null && info.getThreadName().startsWith("db-lock-watchdog-")) {
				long cpu = threads.getThreadCpuTime(info.getThreadId());
				total += Math.max(cpu, 0);
			}
		}
		return total;
	}

	private List<LockHandle> acquireAll(CurveLocks locks, String prefix, int count) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(this.settings.poolSize());
		try {
			List<Future<LockHandle>> futures = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				String key = prefix + "-" + i;
				futures.add(executor.submit(() -> locks.template.acquire(key, null, null)));
			}
			List<LockHandle> held = new ArrayList<>(count);
			for (Future<LockHandle> future : futures) {
				held.add(future.get());
			}
			return held;
		}
		finally {
			executor.shutdown();
		}
	}

	private void releaseAll(List<LockHandle> held) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(this.settings.poolSize());
		try {
			List<Future<?>> futures = new ArrayList<>(held.size());
			for (LockHandle handle : held) {
				futures.add(executor.submit(handle::close));
			}
			for (Future<?> future : futures) {
				future.get();
			}
		}
		finally {
			executor.shutdown();
		}
	}

	// ---- the reaper

	/**
	 * The reaper curve: one reaper run over each count of expired rows while {@value #REAPER_THREADS}
	 * threads acquire and release new keys, against the same threads without the reaper.
	 */
	Curve reaper() throws Exception {
		long[] counts = this.full ? new long[] { 10_000, 100_000, 1_000_000 } : new long[] { 10_000, 100_000 };
		Curve curve = new Curve("reaper", "The reaper", "expired rows to delete",
				"Expired rows written in bulk, then one reaper run (LockReaper.reap(): DELETE ... LIMIT "
						+ new io.github.dblock.autoconfigure.DbLockProperties().getReaper().getBatchSize()
						+ " until a batch comes back short) while " + REAPER_THREADS + " threads acquire and release new "
						+ "keys (running from 0.3 s before; the cycles that start while it runs count); against the "
						+ "same threads for " + this.point.toSeconds() + " s just before, without the reaper.");
		try (CurveLocks locks = new CurveLocks(this.settings, this.settings.poolSize())) {
			LockContender contender = locks.contender();
			LockReaper reaper = locks.reaper();
			boolean first = true;
			for (long count : counts) {
				locks.empty();
				String prefix = this.runId + "-reap" + count;
				Curves.window(new CycleLoop(contender, REAPER_THREADS, KeyScheme.newEachCycle(prefix + "w"), 0),
						first ? this.settings.warmup() : Duration.ofMillis(300));
				first = false;
				Outcome baseline = Curves.window(
						new CycleLoop(contender, REAPER_THREADS, KeyScheme.newEachCycle(prefix + "b"), 0), this.point);
				locks.fill(prefix + "-expired", 0, count, true);
				Curves.analyse(this.settings, locks);
				CycleLoop during = new CycleLoop(contender, REAPER_THREADS, KeyScheme.newEachCycle(prefix + "d"), 0);
				// the threads run a moment before the reaper starts; only the cycles that start while it runs count
				during.recording(false);
				long loopStart = System.nanoTime() + Duration.ofMillis(20).toNanos();
				Outcome[] outcome = new Outcome[1];
				Thread acquirers = new Thread(() -> {
					try {
						outcome[0] = during.run(loopStart, Long.MAX_VALUE);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}, "reaper-curve-acquirers");
				acquirers.start();
				CycleLoop.parkUntil(loopStart + Duration.ofMillis(300).toNanos());
				during.recording(true);
				long start = System.nanoTime();
				int deleted = reaper.reap();
				double seconds = (System.nanoTime() - start) / 1e9;
				during.recording(false);
				during.stop();
				acquirers.join();
				Outcome concurrent = outcome[0];
				Map<String, Double> values = new LinkedHashMap<>();
				values.put("rows deleted/s", deleted / seconds);
				values.put("reaper run s", seconds);
				values.put("deleted", (double) deleted);
				values.put("acquire p50 ms, reaper running", Latencies.millis(concurrent.acquireLatencies, 50));
				values.put("acquire p99 ms, reaper running", Latencies.millis(concurrent.acquireLatencies, 99));
				values.put("acquire p50 ms, no reaper", Latencies.millis(baseline.acquireLatencies, 50));
				values.put("acquire p99 ms, no reaper", Latencies.millis(baseline.acquireLatencies, 99));
				values.put("database cycles/s, reaper running", concurrent.databaseCycles() / seconds);
				values.put("database cycles/s, no reaper", baseline.databaseCycles() / baseline.seconds());
				curve.add("", count, values, Map.of());
				Curves.progress(curve, "", count, values);
			}
			locks.empty();
		}
		curve.chart("Reaper: rows deleted per second", "rows/s", true, "rows deleted/s");
		curve.chart("Acquisitions while the reaper runs", "ms", true, "acquire p50 ms, reaper running",
				"acquire p99 ms, reaper running", "acquire p50 ms, no reaper", "acquire p99 ms, no reaper");
		curve.chart("Database cycles/s while the reaper runs", "cycles/s", true, "database cycles/s, reaper running",
				"database cycles/s, no reaper");
		curve.growth = "reaper run time " + curve.growthOf("", "reaper run s") + "; rows/s "
				+ curve.growthOf("", "rows deleted/s") + "; concurrent acquire p99 "
				+ curve.growthOf("", "acquire p99 ms, reaper running");
		return curve;
	}

}
