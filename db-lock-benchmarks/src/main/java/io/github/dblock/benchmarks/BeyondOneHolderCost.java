package io.github.dblock.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockRequest;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.benchmarks.OneThreadRounds.Variant;
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
 * Writes {@code beyond-one-holder.md} to the results directory. The environment is
 * {@link OneThreadRounds}'.
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
		OneThreadRounds.report(args, "A semaphore's permit and two keys at once",
				"One thread, uncontended; a new key every cycle, but for the semaphore (one key of 3 permits).",
				"| database | cycle | cycles/s (median of rounds) | p50 ms | vs. the lease cycle | vs. raw |\n|---|---|---|---|---|---|\n",
				BeyondOneHolderCost.class, "beyond-one-holder.md", BeyondOneHolderCost::measure);
	}

	private static String measure(String name, String url, String user, OneThreadRounds rounds) throws Exception {
		try (HikariDataSource dataSource = OneThreadRounds.dataSource(url, user)) {
			SqlDialect dialect = SqlDialects.detect(dataSource, TABLE);
			new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_raw");
			jdbc.execute("CREATE TABLE db_lock_bench_raw (lock_key VARCHAR(255) PRIMARY KEY, owner VARCHAR(128))");
			String run = UUID.randomUUID().toString().substring(0, 8);
			try (LockEngine engine = new LockEngine(new JdbcLockRepository(dataSource, dialect),
					LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
				List<Variant> variants = List.of(new Variant("raw INSERT/DELETE", (i) -> {
					String key = "raw-" + run + "-" + i;
					jdbc.update("INSERT INTO db_lock_bench_raw (lock_key, owner) VALUES (?, ?)", key, run);
					jdbc.update("DELETE FROM db_lock_bench_raw WHERE lock_key = ? AND owner = ?", key, run);
				}), new Variant("lease", (i) -> engine.acquire(LockRequest.of("lease-" + run + "-" + i, WAIT, LEASE)).close()),
						new Variant("semaphore permit (3)", (i) -> engine.acquire(new LockRequest("exports-" + run, WAIT, LEASE,
								false, Duration.ZERO, DbLockMode.SEMAPHORE, 3)).close()),
						new Variant("2 keys at once", (i) -> engine.acquireAll(List.of(LockRequest.of("a-" + run + "-" + i, WAIT,
								LEASE), LockRequest.of("b-" + run + "-" + i, WAIT, LEASE))).close()));
				rounds.measure(variants);
				return OneThreadRounds.rows(name, variants, false);
			}
			finally {
				jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_raw");
			}
		}
	}

}
