package io.github.dblock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
 * Every row mode's cycle on a known key beside the lease cycle on a known key and the raw
 * {@code INSERT}/{@code DELETE} of a row, uncontended, on one thread, on MariaDB and
 * PostgreSQL in one run (rounds alternate, so that the machine's load falls on each alike):
 * <ul>
 * <li>raw: {@code INSERT} a row, {@code DELETE} it (two commits);</li>
 * <li>lease, fair, read, write, each with a fixed lease and with a renewed one: acquire the
 * variant's one key in that mode, release it (the fair mode's key row exists after the
 * first cycle).</li>
 * </ul>
 * Each row gives the machine's TCP segments sent per cycle ({@code /proc/net/snmp}): about
 * two per round trip to a local server (the request and its reply). Writes
 * {@code mode-cycles.md} to the results
 * directory. The environment is {@link OneThreadRounds}', and {@code DB_LOCK_BENCH_MODES}
 * (comma-separated; default {@code LEASE,FAIR,READ,WRITE}; the lease mode is always
 * measured, as the reference).
 */
public final class ModeCycleCost {

	private static final String TABLE = "bench_db_lock";

	private static final Duration WAIT = Duration.ofSeconds(5);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private ModeCycleCost() {
	}

	/**
	 * Runs the measurement.
	 * @param args the results directory
	 * @throws Exception if a database fails
	 */
	public static void main(String[] args) throws Exception {
		OneThreadRounds.report(args, "Every mode's cycle on a known key",
				"One thread, uncontended, one key per variant.",
				"| database | cycle | cycles/s (median of rounds) | p50 ms | vs. the lease cycle | vs. raw | TCP segments a cycle |\n"
						+ "|---|---|---|---|---|---|---|\n",
				ModeCycleCost.class, "mode-cycles.md", ModeCycleCost::measure);
	}

	/** The modes of {@code DB_LOCK_BENCH_MODES} (comma-separated), the lease mode first; default lease, fair, read, write. */
	private static List<DbLockMode> modes() {
		String modes = System.getenv().getOrDefault("DB_LOCK_BENCH_MODES", "LEASE,FAIR,READ,WRITE");
		List<DbLockMode> chosen = new ArrayList<>(List.of(DbLockMode.LEASE));
		for (String mode : modes.split(",")) {
			DbLockMode parsed = DbLockMode.valueOf(mode.trim().toUpperCase(Locale.ROOT));
			if (!chosen.contains(parsed)) {
				chosen.add(parsed);
			}
		}
		return chosen;
	}

	private static String measure(String name, String url, String user, OneThreadRounds rounds) throws Exception {
		try (HikariDataSource dataSource = OneThreadRounds.dataSource(url, user)) {
			SqlDialect dialect = SqlDialects.detect(dataSource, TABLE);
			new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_raw");
			jdbc.execute("CREATE TABLE db_lock_bench_raw (lock_key VARCHAR(255) PRIMARY KEY, owner VARCHAR(128))");
			String vacuumed = "";
			if ("PostgreSQL".equals(name)) {
				// earlier runs' dead rows would slow every read of a key's rows where autovacuum is off
				for (String table : List.of("", "_rw", "_rw_intents", "_fair_queue", "_fair_keys")) {
					jdbc.execute("VACUUM " + TABLE + table);
				}
				vacuumed = " (its tables vacuumed first; autovacuum " + jdbc.queryForObject("SHOW autovacuum", String.class)
						+ ")";
			}
			String run = UUID.randomUUID().toString().substring(0, 8);
			try (LockEngine engine = new LockEngine(new JdbcLockRepository(dataSource, dialect),
					LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
				List<Variant> variants = new ArrayList<>();
				variants.add(new Variant("raw INSERT/DELETE", (i) -> {
					jdbc.update("INSERT INTO db_lock_bench_raw (lock_key, owner) VALUES (?, ?)", "raw-" + run, run);
					jdbc.update("DELETE FROM db_lock_bench_raw WHERE lock_key = ? AND owner = ?", "raw-" + run, run);
				}));
				for (DbLockMode mode : modes()) {
					for (boolean renewed : List.of(false, true)) {
						String variant = mode.name().toLowerCase() + (renewed ? ", renewed" : ", fixed lease");
						LockRequest request = new LockRequest(variant + "-" + run, WAIT, LEASE, renewed, Duration.ZERO, mode);
						variants.add(new Variant(variant, (i) -> engine.acquire(request).close()));
					}
				}
				rounds.measure(variants);
				return OneThreadRounds.rows(name + vacuumed, variants, true);
			}
			finally {
				jdbc.execute("DROP TABLE IF EXISTS db_lock_bench_raw");
			}
		}
	}

}
