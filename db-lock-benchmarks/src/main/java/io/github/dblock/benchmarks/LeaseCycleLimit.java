package io.github.dblock.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.HdrHistogram.Histogram;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockProperties;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.support.DbLockTemplate;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.GeneratedKeyHolder;

/**
 * The lease cycle against the physical limit of a durable lock, the seed documents' raw
 * {@code INSERT}/{@code DELETE} (two commits), a new key every cycle, at 1, 4, 16 and 32
 * threads in one JVM, on MariaDB and PostgreSQL in one run; and what each cycle costs the
 * JVM (CPU and allocation) and, when the database runs on this machine, the server (CPU).
 * <ul>
 * <li>The variants: raw; db-lock's own two statements (its dialect's acquisition and the
 * release's {@code DELETE}) through a {@code JdbcTemplate}, without its engine, which
 * separates what the row costs the server from what the engine costs the JVM; on MariaDB,
 * the same with {@code INSERT ... VALUES}, which InnoDB runs without the table's
 * {@code AUTO-INC} lock and so without the tokens' order (what that order costs; not a lock
 * db-lock may take); and db-lock.</li>
 * <li>Raw has a pool of {@value #POOL} connections, db-lock and its statements by hand
 * another; every variant runs on as many threads.</li>
 * <li>Before the rounds of a thread count each variant is warmed up until the JIT is quiet:
 * windows of 1 s ({@link JitWarmUp}, at most {@value #MAX_WARMUP_SECONDS} s).</li>
 * <li>Then {@code DB_LOCK_BENCH_ROUNDS} (10) rounds of {@code DB_LOCK_BENCH_MEASURE_SECONDS}
 * (10, split over the rounds) per variant, alternating, so that the machine's load falls on
 * each alike; cycles/s is the median round's.</li>
 * </ul>
 * Writes {@code lease-cycle-limit.md} to the results directory. The databases are
 * {@link OneThreadRounds#databases()}'; {@code DB_LOCK_BENCH_THREADS} (e.g. {@code 1,16})
 * chooses the thread counts.
 */
public final class LeaseCycleLimit {

	private static final String TABLE = "bench_db_lock";

	private static final String RAW_TABLE = "db_lock_bench_limit_raw";

	private static final int POOL = 16;

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final int MAX_WARMUP_SECONDS = 40;

	private LeaseCycleLimit() {
	}

	/**
	 * Runs the measurement.
	 * @param args the results directory
	 * @throws Exception if a database fails
	 */
	public static void main(String[] args) throws Exception {
		Map<String, String> env = System.getenv();
		int rounds = Math.max(1, Integer.parseInt(env.getOrDefault("DB_LOCK_BENCH_ROUNDS", "10")));
		Duration round = Duration
			.ofMillis((long) (Double.parseDouble(env.getOrDefault("DB_LOCK_BENCH_MEASURE_SECONDS", "10")) * 1000 / rounds));
		int[] threadCounts = Arrays.stream(env.getOrDefault("DB_LOCK_BENCH_THREADS", "1,4,16,32").split(","))
			.map(String::trim)
			.mapToInt(Integer::parseInt)
			.toArray();
		StringBuilder report = new StringBuilder("# The lease cycle against the raw INSERT/DELETE lock\n\n")
			.append("A new key every cycle (acquire + release, nothing held); raw: the seed documents' `INSERT` of the ")
			.append("key's row and its `DELETE`, each in autocommit through a `JdbcTemplate`; db-lock: `DbLockTemplate` ")
			.append("(lease mode, default back-off, 5 s wait, a 30 s lease renewed by the watchdog; releases that come at ")
			.append("once share a `DELETE`); db-lock's statements by hand: its dialect's ")
			.append("acquiring statement (a 30 s lease) and its release's `DELETE`, one per key, through a `JdbcTemplate`, ")
			.append("without the engine (what ")
			.append("its row, its fencing token in holding order and its database time cost); on MariaDB, the same with ")
			.append("`INSERT ... VALUES`, which InnoDB runs without the table's `AUTO-INC` lock, so tokens may be drawn ")
			.append("out of holding order (what that order costs; not a lock db-lock may take). Raw a pool of ").append(POOL)
			.append(" connections, db-lock and its statements another; each variant warmed up until the JIT is quiet, ")
			.append("then ").append(rounds).append(" rounds of ")
			.append(round.toMillis()).append(" ms per variant, alternating; cycles/s is the median round's. CPU per ")
			.append("cycle: the whole JVM's (`getProcessCpuTime`: the workers, GC, JIT, db-lock's threads) and the ")
			.append("server's (its processes' CPU from `/proc`, the database running on this machine), over the rounds; ")
			.append("allocation per cycle: the worker threads'.\n\n")
			.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
			.append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.runtime.version"))
			.append(". Run ").append(Instant.now())
			.append(", load average ").append(OneThreadRounds.loadAverage()).append(" at the start");
		StringBuilder table = new StringBuilder("| database | threads | variant | cycles/s | x raw | p50 ms | JVM CPU µs/cycle | "
				+ "callers' CPU µs/cycle | db-lock's threads' CPU µs/cycle | JIT ms/s | server CPU µs/cycle | "
				+ "allocated bytes/cycle | warm-up s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
		for (String[] database : OneThreadRounds.databases()) {
			for (int threads : threadCounts) {
				table.append(measure(database[0], database[1], database[2], threads, rounds, round));
			}
		}
		report.append(", ").append(OneThreadRounds.loadAverage()).append(" at the end.\n\n").append(table)
			.append("\nThe command: `./mvnw -pl db-lock-benchmarks -am verify -Pbench -DskipTests ")
			.append("-Dbench.main=io.github.dblock.benchmarks.LeaseCycleLimit`.\n");
		OneThreadRounds.write(args, "lease-cycle-limit.md", report);
	}

	private static HikariDataSource pool(String url, String user, String name) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword("");
		config.setMaximumPoolSize(POOL);
		config.setMinimumIdle(POOL);
		config.setPoolName(name);
		return new HikariDataSource(config);
	}

	private static String measure(String name, String url, String user, int threads, int rounds, Duration round)
			throws Exception {
		String run = UUID.randomUUID().toString().substring(0, 8);
		ServerCpu server = ServerCpu.of(url);
		try (HikariDataSource rawPool = pool(url, user, "raw"); HikariDataSource lockPool = pool(url, user, "db-lock")) {
			JdbcTemplate raw = new JdbcTemplate(rawPool);
			raw.execute("DROP TABLE IF EXISTS " + RAW_TABLE);
			boolean postgresql = url.startsWith("jdbc:postgresql:");
			// the key compared byte for byte, as db-lock's column is (a case-insensitive collation costs more)
			raw.execute("CREATE TABLE " + RAW_TABLE + " (lock_key VARCHAR(255)"
					+ (postgresql ? "" : " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin") + " PRIMARY KEY, owner VARCHAR(128))");
			SqlDialect dialect = SqlDialects.detect(lockPool, TABLE);
			new DbLockSchemaMigration(lockPool, dialect).afterPropertiesSet();
			// db-lock's table as new as raw's: no rows, and on PostgreSQL no dead ones
			raw.execute("TRUNCATE TABLE " + TABLE);
			if (postgresql) {
				raw.execute("VACUUM ANALYZE " + TABLE);
			}
			DbLockProperties.Backoff backoff = new DbLockProperties().getBackoff();
			try (LockEngine engine = new LockEngine(new JdbcLockRepository(lockPool, dialect),
					LockEngineSettings.of(new Backoff(backoff.getInitial(), backoff.getMax())))) {
				DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(5), LEASE);
				String release = "DELETE FROM " + TABLE + " WHERE lock_key = ? AND owner = ? AND token = ?";
				List<Threaded> variants = new ArrayList<>();
				variants.add(new Threaded("raw INSERT/DELETE", threads, (key) -> {
					raw.update("INSERT INTO " + RAW_TABLE + " (lock_key, owner) VALUES (?, ?)", key, run);
					raw.update("DELETE FROM " + RAW_TABLE + " WHERE lock_key = ? AND owner = ?", key, run);
				}));
				// db-lock's two statements, through a JdbcTemplate, without the engine: what its row, its fencing
				// token in holding order and its database time cost the server
				JdbcTemplate direct = new JdbcTemplate(lockPool);
				variants.add(new Threaded("db-lock's statements by hand", threads, (key) -> {
					long token = dialect.tryAcquire(direct, key, run, LEASE).orElseThrow().token();
					direct.update(release, key, run, token);
				}));
				if (!postgresql) {
					// the same with INSERT ... VALUES: InnoDB then draws the token before the key is decided, without
					// the table's AUTO-INC lock, so a later holder of a key may hold a smaller token; not a lock
					// db-lock may take, shown for what the token's order costs
					String values = "INSERT IGNORE INTO " + TABLE + " (lock_key, owner, acquired_at, expires_at) VALUES (?, ?, "
							+ dialect.now() + ", " + dialect.plusMicros(dialect.now()) + ")";
					variants.add(new Threaded("by hand, INSERT ... VALUES (tokens out of order)", threads, (key) -> {
						GeneratedKeyHolder keys = new GeneratedKeyHolder();
						direct.update((con) -> {
							PreparedStatement insert = con.prepareStatement(values, Statement.RETURN_GENERATED_KEYS);
							insert.setString(1, key);
							insert.setString(2, run);
							insert.setLong(3, LEASE.toNanos() / 1000);
							return insert;
						}, keys);
						direct.update(release, key, run, Objects.requireNonNull(keys.getKey()).longValue());
					}));
				}
				variants.add(new Threaded("db-lock", threads, (key) -> template.acquire(key, null, null).close()));
				for (int v = 0; v < variants.size(); v++) {
					variants.get(v).warmUp(run + "-v" + v + "w" + threads);
				}
				for (int i = 0; i < rounds; i++) {
					// each round starts with another variant, so that what one leaves behind (its garbage, the
					// server's purge of its rows) falls on each alike
					for (int n = 0; n < variants.size(); n++) {
						int v = (i + n) % variants.size();
						variants.get(v).round(run + "-v" + v + "-" + threads + "-" + i, round, server);
					}
				}
				StringBuilder rows = new StringBuilder();
				double rawRate = variants.get(0).median();
				for (Threaded variant : variants) {
					rows.append(String.format("| %s | %d | %s | %.0f | %.2fx | %.2f | %.0f | %.0f | %.0f | %.0f | %s | %.0f | %.1f |%n",
							name, threads, variant.name, variant.median(), variant.median() / rawRate, variant.p50Millis(),
							variant.jvmCpuNanos / 1e3 / variant.cycles, variant.callerCpuNanos / 1e3 / variant.cycles,
							variant.engineCpuNanos / 1e3 / variant.cycles, variant.jitMillis / (variant.nanos / 1e9),
							server.found() ? String.format("%.0f", variant.serverCpuNanos / 1e3 / variant.cycles) : "n/a",
							variant.allocated / (double) variant.cycles, variant.warmupSeconds));
				}
				System.out.print(rows);
				return rows.toString();
			}
			finally {
				raw.execute("DROP TABLE IF EXISTS " + RAW_TABLE);
			}
		}
	}

	/** One cycle, on a key. */
	@FunctionalInterface
	private interface Cycle {

		void run(String key) throws Exception;

	}

	/** A cycle run on a number of threads, a new key every cycle, and what its rounds measured. */
	private static final class Threaded {

		final String name;

		private final int threads;

		private final Cycle cycle;

		private final List<Double> rates = new ArrayList<>();

		private final Histogram latencies = Latencies.nanos();

		long cycles;

		long jvmCpuNanos;

		long callerCpuNanos;

		long engineCpuNanos;

		long jitMillis;

		long nanos;

		long serverCpuNanos;

		long allocated;

		double warmupSeconds;

		Threaded(String name, int threads, Cycle cycle) {
			this.name = name;
			this.threads = threads;
			this.cycle = cycle;
		}

		/** Windows of 1 s until the JIT is quiet ({@link JitWarmUp}). */
		void warmUp(String prefix) throws Exception {
			this.warmupSeconds = JitWarmUp.run((i, length) -> window(prefix + "-" + i, length, null), Duration.ofSeconds(1),
					Duration.ofSeconds(MAX_WARMUP_SECONDS))
				.toMillis() / 1000.0;
		}

		void round(String prefix, Duration length, ServerCpu server) throws Exception {
			com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
				.getOperatingSystemMXBean();
			java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
			long engine = engineCpu();
			long compiled = jit.getTotalCompilationTime();
			long serverCpu = server.nanos();
			// read last before the window and first after it: the reads of the others are not the window's
			long jvm = os.getProcessCpuTime();
			long[] outcome = window(prefix, length, this.latencies);
			this.jvmCpuNanos += os.getProcessCpuTime() - jvm;
			// a db-lock thread that ended during the round takes its time with it: never below 0
			this.engineCpuNanos += Math.max(0, engineCpu() - engine);
			this.jitMillis += jit.getTotalCompilationTime() - compiled;
			this.callerCpuNanos += outcome[3];
			this.nanos += outcome[2];
			this.serverCpuNanos += server.nanos() - serverCpu;
			this.cycles += outcome[0];
			this.allocated += outcome[1];
			this.rates.add(outcome[0] / (outcome[2] / 1e9));
		}

		/**
		 * The CPU time of db-lock's own threads (named {@code db-lock-...}; the pool's are
		 * {@code db-lock:...}) alive now; one that ended since the last read is missed.
		 */
		private static long engineCpu() {
			java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
			long total = 0;
			for (java.lang.management.ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
				if (info != null && info.getThreadName().startsWith("db-lock-")) {
					total += Math.max(0, mx.getThreadCpuTime(info.getThreadId()));
				}
			}
			return total;
		}

		/**
		 * Runs the window; returns its cycles, the bytes its threads allocated, its length and
		 * its threads' CPU time in nanoseconds.
		 */
		private long[] window(String prefix, Duration length, Histogram record) throws Exception {
			com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
			long[] cycles = new long[this.threads];
			long[] allocated = new long[this.threads];
			long[] cpu = new long[this.threads];
			AtomicReference<Throwable> failure = new AtomicReference<>();
			CountDownLatch ready = new CountDownLatch(this.threads);
			CountDownLatch go = new CountDownLatch(1);
			long[] bounds = new long[2];
			List<Thread> workers = new ArrayList<>();
			for (int t = 0; t < this.threads; t++) {
				int index = t;
				Thread worker = new Thread(() -> {
					ready.countDown();
					try {
						go.await();
						Histogram mine = Latencies.nanos();
						long before = mx.getCurrentThreadAllocatedBytes();
						long cpuBefore = mx.getCurrentThreadCpuTime();
						long n = 0;
						while (System.nanoTime() - bounds[1] < 0) {
							long cycleStart = System.nanoTime();
							this.cycle.run(prefix + "-" + index + "-" + n);
							mine.recordValue(System.nanoTime() - cycleStart);
							n++;
						}
						cycles[index] = n;
						allocated[index] = mx.getCurrentThreadAllocatedBytes() - before;
						cpu[index] = mx.getCurrentThreadCpuTime() - cpuBefore;
						if (record != null) {
							synchronized (record) {
								record.add(mine);
							}
						}
					}
					catch (Throwable ex) {
						failure.compareAndSet(null, ex);
					}
				}, "limit-" + t);
				workers.add(worker);
				worker.start();
			}
			ready.await();
			bounds[0] = System.nanoTime();
			bounds[1] = bounds[0] + length.toNanos();
			go.countDown();
			for (Thread worker : workers) {
				worker.join();
			}
			long elapsed = System.nanoTime() - bounds[0];
			if (failure.get() != null) {
				throw new IllegalStateException("A cycle of " + this.name + " failed", failure.get());
			}
			return new long[] { Arrays.stream(cycles).sum(), Arrays.stream(allocated).sum(), elapsed,
					Arrays.stream(cpu).sum() };
		}

		double median() {
			double[] sorted = this.rates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
			return (sorted[(sorted.length - 1) / 2] + sorted[sorted.length / 2]) / 2;
		}

		double p50Millis() {
			return Latencies.millis(this.latencies, 50);
		}

	}

}
