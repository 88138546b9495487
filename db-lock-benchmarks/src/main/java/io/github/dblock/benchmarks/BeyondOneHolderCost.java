package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The semaphore's and the several keys' cycles beside the lease cycle and the raw
 * {@code INSERT}/{@code DELETE} of a row, uncontended, on one thread, on MariaDB and
 * PostgreSQL in one run (rounds alternate, so that the machine's load falls on each alike):
 * <ul>
 * <li>raw: {@code INSERT} a new key's row, {@code DELETE} it (two commits);</li>
 * <li>lease: acquire a new key, release it;</li>
 * <li>semaphore permit: acquire a permit of one key of 3 permits, release it (the key's
 * number of permits is read once per JVM);</li>
 * <li>2 keys: acquire two new keys at once ({@code acquireAll}), release them.</li>
 * </ul>
 * Writes {@code beyond-one-holder.md} to the results directory. Environment as
 * {@link GuardCost}'s.
 */
public final class BeyondOneHolderCost {

	private static final String TABLE = "bench_db_lock";

	private static final Duration WAIT = Duration.ofSeconds(5);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private BeyondOneHolderCost() {
	}

	/**
	 * Runs the measurement.
	 * @param args the results directory
	 * @throws Exception if a database fails
	 */
	public static void main(String[] args) throws Exception {
		Map<String, String> env = System.getenv();
		int rounds = Integer.parseInt(env.getOrDefault("DB_LOCK_BENCH_ROUNDS", "5"));
		Duration measure = Duration.ofMillis((long) (Double.parseDouble(env.getOrDefault("DB_LOCK_BENCH_MEASURE_SECONDS",
				"5")) * 1000));
		StringBuilder report = new StringBuilder("# A semaphore's permit and two keys at once\n\n")
			.append("One thread, uncontended, a new key every cycle (the semaphore: one key of 3 permits). ").append(rounds)
			.append(" rounds of ").append(measure.dividedBy(rounds).toMillis())
			.append(" ms per variant, alternating. Run ").append(Instant.now()).append(", load average ")
			.append(loadAverage()).append(".\n\n")
			.append("| database | cycle | cycles/s (median of rounds) | p50 ms | vs. the lease cycle | vs. raw |\n")
			.append("|---|---|---|---|---|---|\n");
		String[][] databases = { { "MariaDB", env.getOrDefault("DB_LOCK_BENCH_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test"), "root" },
				{ "PostgreSQL", env.getOrDefault("DB_LOCK_BENCH_POSTGRESQL_URL", "jdbc:postgresql://127.0.0.1:5432/test"), "postgres" } };
		for (String[] database : databases) {
			if (database[1].isEmpty()) {
				continue;
			}
			report.append(measure(database[0], database[1], database[2], rounds, measure));
		}
		report.append("\nThe command: `./mvnw -pl db-lock-benchmarks -am verify -Pbench -DskipTests ")
			.append("-Dbench.main=io.github.dblock.benchmarks.BeyondOneHolderCost`.\n");
		Path results = Path.of(args.length > 0 ? args[0] : "results");
		Files.createDirectories(results);
		Files.writeString(results.resolve("beyond-one-holder.md"), report);
		System.out.println(report);
	}

	private static String measure(String name, String url, String user, int rounds, Duration measure) throws Exception {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword("");
		config.setMaximumPoolSize(4);
		try (HikariDataSource dataSource = new HikariDataSource(config)) {
			SqlDialect dialect = SqlDialects.detect(dataSource, TABLE);
			new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_raw");
			jdbc.execute("CREATE TABLE db_lock_bench_raw (lock_key VARCHAR(255) PRIMARY KEY, owner VARCHAR(128))");
			JdbcLockRepository repository = new JdbcLockRepository(dataSource, dialect);
			String run = UUID.randomUUID().toString().substring(0, 8);
			try (LockEngine engine = new LockEngine(repository,
					LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
				Variant[] variants = { new Variant("raw INSERT/DELETE", (i) -> {
					String key = "raw-" + run + "-" + i;
					jdbc.update("INSERT INTO db_lock_bench_raw (lock_key, owner) VALUES (?, ?)", key, run);
					jdbc.update("DELETE FROM db_lock_bench_raw WHERE lock_key = ? AND owner = ?", key, run);
				}), new Variant("lease", (i) -> engine.acquire(LockRequest.of("lease-" + run + "-" + i, WAIT, LEASE)).close()),
						new Variant("semaphore permit (3)", (i) -> engine.acquire(new LockRequest("exports-" + run, WAIT, LEASE,
								false, Duration.ZERO, DbLockMode.SEMAPHORE, 3)).close()),
						new Variant("2 keys at once", (i) -> engine.acquireAll(List.of(LockRequest.of("a-" + run + "-" + i, WAIT,
								LEASE), LockRequest.of("b-" + run + "-" + i, WAIT, LEASE))).close()) };
				for (Variant variant : variants) {
					variant.round(Duration.ofMillis(1500), null);
				}
				long roundNanos = measure.dividedBy(rounds).toNanos();
				for (int round = 0; round < rounds; round++) {
					for (Variant variant : variants) {
						List<Long> latencies = new ArrayList<>();
						variant.rates.add(variant.round(Duration.ofNanos(roundNanos), latencies));
						variant.latencies.addAll(latencies);
					}
				}
				double raw = variants[0].median();
				double lease = variants[1].median();
				StringBuilder rows = new StringBuilder();
				for (Variant variant : variants) {
					rows.append("| ").append(name).append(" | ").append(variant.name).append(" | ")
						.append(String.format("%.0f", variant.median())).append(" | ")
						.append(String.format("%.2f", variant.p50Millis())).append(" | ")
						.append(String.format("%.2fx", variant.median() / lease)).append(" | ")
						.append(String.format("%.2fx", variant.median() / raw)).append(" |\n");
				}
				return rows.toString();
			}
			finally {
				jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_raw");
			}
		}
	}

	private static String loadAverage() {
		try {
			return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	/** One cycle, measured. */
	private static final class Variant {

		final String name;

		final Cycle cycle;

		final List<Double> rates = new ArrayList<>();

		final List<Long> latencies = new ArrayList<>();

		private long sequence;

		Variant(String name, Cycle cycle) {
			this.name = name;
			this.cycle = cycle;
		}

		double round(Duration length, List<Long> latencies) throws Exception {
			long end = System.nanoTime() + length.toNanos();
			long cycles = 0;
			long start = System.nanoTime();
			while (System.nanoTime() - end < 0) {
				long cycleStart = System.nanoTime();
				this.cycle.run(this.sequence++);
				if (latencies != null) {
					latencies.add(System.nanoTime() - cycleStart);
				}
				cycles++;
			}
			return cycles / ((System.nanoTime() - start) / 1e9);
		}

		double median() {
			double[] sorted = this.rates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
			return sorted[sorted.length / 2];
		}

		double p50Millis() {
			long[] sorted = this.latencies.stream().mapToLong(Long::longValue).sorted().toArray();
			return (sorted.length == 0) ? 0 : sorted[sorted.length / 2] / 1e6;
		}

	}

	/** One cycle of a variant. */
	@FunctionalInterface
	private interface Cycle {

		void run(long sequence) throws Exception;

	}

}
