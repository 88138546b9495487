package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.autoconfigure.DbLockCommitGuard;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.CommitGuard;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The commit guard's cost: a business transaction under a lock (acquire a new key, begin,
 * read a row, write it back incremented, commit, release), with the guard and without it,
 * and the same transaction with no lock, on one thread, on MariaDB and PostgreSQL in one run
 * (rounds alternate, so that the machine's load falls on each alike). Writes
 * {@code guard-cost.md} to the results directory.
 * <p>
 * {@code DB_LOCK_BENCH_MARIADB_URL} (default the local MariaDB's {@code test}),
 * {@code DB_LOCK_BENCH_POSTGRESQL_URL} (the local PostgreSQL's {@code test}; an empty value
 * skips a database), users {@code root} and {@code postgres}, empty passwords;
 * {@code DB_LOCK_BENCH_ROUNDS} (5) rounds of {@code DB_LOCK_BENCH_MEASURE_SECONDS} (5, split
 * over the rounds) per variant.
 */
public final class GuardCost {

	private static final String TABLE = "bench_db_lock";

	private GuardCost() {
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
		StringBuilder report = new StringBuilder("# The commit guard's cost\n\n")
			.append("A business transaction under a lock, one thread, a new key every cycle: acquire, begin, `SELECT` a ")
			.append("row, `UPDATE` it, commit, release. `db-lock.guard-commits` adds one statement before the commit. ")
			.append(rounds).append(" rounds of ").append(measure.dividedBy(rounds).toMillis())
			.append(" ms per variant, alternating. Run ").append(Instant.now()).append(", load average ")
			.append(loadAverage()).append(".\n\n")
			.append("| database | variant | cycles/s (median of rounds) | p50 ms | vs. without the guard |\n|---|---|---|---|---|\n");
		String[][] databases = { { "MariaDB", env.getOrDefault("DB_LOCK_BENCH_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test"), "root" },
				{ "PostgreSQL", env.getOrDefault("DB_LOCK_BENCH_POSTGRESQL_URL", "jdbc:postgresql://127.0.0.1:5432/test"), "postgres" } };
		for (String[] database : databases) {
			if (database[1].isEmpty()) {
				continue;
			}
			report.append(measure(database[0], database[1], database[2], rounds, measure));
		}
		report.append("\nThe command: `./mvnw -pl db-lock-benchmarks -am verify -Pbench -DskipTests ")
			.append("-Dbench.main=io.github.dblock.benchmarks.GuardCost`.\n");
		Path results = Path.of(args.length > 0 ? args[0] : "results");
		Files.createDirectories(results);
		Files.writeString(results.resolve("guard-cost.md"), report);
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
			jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_account");
			jdbc.execute("CREATE TABLE db_lock_bench_account (id INT PRIMARY KEY, balance BIGINT)");
			jdbc.update("INSERT INTO db_lock_bench_account VALUES (1, 0)");
			JdbcLockRepository repository = new JdbcLockRepository(dataSource, dialect);
			try (LockEngine engine = new LockEngine(repository,
					LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
				DataSourceTransactionManager plain = new DataSourceTransactionManager(dataSource);
				DataSourceTransactionManager guarded = new DataSourceTransactionManager(dataSource);
				new DbLockCommitGuard(new CommitGuard(repository.connections()), dataSource, new DefaultListableBeanFactory())
						.addTo(guarded);
				Variant[] variants = { new Variant("no lock", null, plain), new Variant("lock, no guard", engine, plain),
						new Variant("lock + guard", engine, guarded) };
				String run = UUID.randomUUID().toString().substring(0, 8);
				for (Variant variant : variants) {
					variant.round(jdbc, run, Duration.ofMillis(1500), null);
				}
				long roundNanos = measure.dividedBy(rounds).toNanos();
				for (int round = 0; round < rounds; round++) {
					for (Variant variant : variants) {
						List<Long> latencies = new ArrayList<>();
						double perSecond = variant.round(jdbc, run, Duration.ofNanos(roundNanos), latencies);
						variant.rates.add(perSecond);
						variant.latencies.addAll(latencies);
					}
				}
				double without = variants[1].median();
				StringBuilder rows = new StringBuilder();
				for (Variant variant : variants) {
					rows.append("| ").append(name).append(" | ").append(variant.name).append(" | ")
						.append(String.format("%.0f", variant.median())).append(" | ")
						.append(String.format("%.2f", variant.p50Millis())).append(" | ")
						.append(String.format("%.2fx", variant.median() / without)).append(" |\n");
				}
				jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_account");
				return rows.toString();
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

	/** One way of running the business transaction. */
	private static final class Variant {

		final String name;

		final LockEngine engine;

		final TransactionTemplate transaction;

		final List<Double> rates = new ArrayList<>();

		final List<Long> latencies = new ArrayList<>();

		private long sequence;

		Variant(String name, LockEngine engine, DataSourceTransactionManager transactions) {
			this.name = name;
			this.engine = engine;
			this.transaction = new TransactionTemplate(transactions);
		}

		double round(JdbcTemplate jdbc, String run, Duration length, List<Long> latencies) {
			long end = System.nanoTime() + length.toNanos();
			long cycles = 0;
			long start = System.nanoTime();
			while (System.nanoTime() - end < 0) {
				long cycleStart = System.nanoTime();
				LockHandle handle = (this.engine != null) ? this.engine.acquire(new LockRequest("guard-" + run + "-"
						+ this.name.length() + "-" + (this.sequence++), Duration.ofSeconds(5), Duration.ofSeconds(30), true,
						Duration.ZERO)) : null;
				try {
					this.transaction.executeWithoutResult((status) -> {
						long balance = jdbc.queryForObject("SELECT balance FROM db_lock_bench_account WHERE id = 1",
								Long.class);
						jdbc.update("UPDATE db_lock_bench_account SET balance = ? WHERE id = 1", balance + 1);
					});
				}
				finally {
					if (handle != null) {
						handle.close();
					}
				}
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

}
