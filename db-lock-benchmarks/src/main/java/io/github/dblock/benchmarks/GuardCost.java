package io.github.dblock.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.autoconfigure.DbLockCommitGuard;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.benchmarks.OneThreadRounds.Variant;
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
 * {@code guard-cost.md} to the results directory. The environment is
 * {@link OneThreadRounds}'.
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
		OneThreadRounds.report(args, "The commit guard's cost",
				"A business transaction under a lock, one thread, a new key every cycle: acquire, begin, `SELECT` a "
						+ "row, `UPDATE` it, commit, release. `db-lock.guard-commits` adds one statement before the commit.",
				"| database | variant | cycles/s (median of rounds) | p50 ms | vs. without the guard |\n|---|---|---|---|---|\n",
				GuardCost.class, "guard-cost.md", GuardCost::measure);
	}

	private static String measure(String name, String url, String user, OneThreadRounds rounds) throws Exception {
		try (HikariDataSource dataSource = OneThreadRounds.dataSource(url, user)) {
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
				String run = UUID.randomUUID().toString().substring(0, 8);
				List<Variant> variants = List.of(variant("no lock", null, plain, jdbc, run),
						variant("lock, no guard", engine, plain, jdbc, run), variant("lock + guard", engine, guarded, jdbc, run));
				rounds.measure(variants);
				double without = variants.get(1).median();
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

	/** The business transaction, under a new key's lock if there is an engine. */
	private static Variant variant(String name, LockEngine engine, DataSourceTransactionManager transactions,
			JdbcTemplate jdbc, String run) {
		TransactionTemplate transaction = new TransactionTemplate(transactions);
		return new Variant(name, (sequence) -> {
			LockHandle handle = (engine != null) ? engine.acquire(new LockRequest("guard-" + run + "-" + name.length()
					+ "-" + sequence, Duration.ofSeconds(5), Duration.ofSeconds(30), true, Duration.ZERO)) : null;
			try {
				transaction.executeWithoutResult((status) -> {
					long balance = jdbc.queryForObject("SELECT balance FROM db_lock_bench_account WHERE id = 1", Long.class);
					jdbc.update("UPDATE db_lock_bench_account SET balance = ? WHERE id = 1", balance + 1);
				});
			}
			finally {
				if (handle != null) {
					handle.close();
				}
			}
		});
	}

}
