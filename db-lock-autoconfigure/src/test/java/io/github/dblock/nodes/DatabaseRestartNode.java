package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One node while its database is killed and restarted: threads that take one key and,
 * holding it, increment a fenced counter (read with {@code SELECT ... FOR UPDATE}, written
 * only if the lock's token is larger than the last writer's, and logged with the token and
 * the value it wrote)
 * until a stop file appears. Prints what happened:
 * <ul>
 * <li>{@code increments}, {@code rejected} (fenced writes refused), {@code workErrors}
 * (the work's transaction failed, perhaps after its commit);</li>
 * <li>{@code databaseErrors} (acquisitions that failed with a {@code DbLockException}),
 * {@code unclearErrors} (those whose message does not say the database failed),
 * {@code timeouts} (the wait ran out);</li>
 * <li>{@code overruns}: acquisitions that took longer than their wait plus the statement
 * limit plus the pool's connection timeout plus a second (plus the driver's failover time,
 * on a URL that fails over); {@code maxAcquireMillis}.</li>
 * </ul>
 */
public final class DatabaseRestartNode {

	static final Duration WAIT = Duration.ofSeconds(3);

	static final Duration LEASE = Duration.ofSeconds(5);

	static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(2);

	static final Duration POOL_TIMEOUT = Duration.ofSeconds(1);

	private DatabaseRestartNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, threads, stop file, the milliseconds the driver's
	 * failover may add to a statement
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[3]);
		Path stop = Path.of(args[4]);
		long bound = (WAIT.plus(STATEMENT_TIMEOUT).plus(POOL_TIMEOUT).plusSeconds(1).plusMillis(Long.parseLong(args[5])))
			.toNanos();
		Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
		for (String name : new String[] { "increments", "rejected", "workErrors", "databaseErrors", "unclearErrors",
				"timeouts", "overruns" }) {
			counts.put(name, new AtomicInteger());
		}
		AtomicLong maxAcquireNanos = new AtomicLong();
		Set<String> messages = ConcurrentHashMap.newKeySet();
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(args[0]);
		config.setUsername(args[1]);
		config.setPassword(args[2]);
		config.setMaximumPoolSize(threads + 4);
		config.setConnectionTimeout(POOL_TIMEOUT.toMillis());
		config.setInitializationFailTimeout(-1);
		try (HikariDataSource dataSource = new HikariDataSource(config);
				LockEngine engine = new LockEngine(
						new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE),
								STATEMENT_TIMEOUT),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			DbLockTemplate template = new DbLockTemplate(engine, "", WAIT, LEASE);
			long cap = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
			Concurrently.run(threads, (thread) -> {
				while (!Files.exists(stop) && System.nanoTime() - cap < 0) {
					long start = System.nanoTime();
					LockHandle handle;
					try {
						handle = template.acquire("chaos", null, null);
					}
					catch (LockAcquisitionException ex) {
						counts.get("timeouts").incrementAndGet();
						continue;
					}
					catch (DbLockException ex) {
						counts.get("databaseErrors").incrementAndGet();
						if (!ex.getMessage().contains("database")) {
							counts.get("unclearErrors").incrementAndGet();
							messages.add(ex.getMessage());
						}
						// the database is down: try again in a moment, as a caller would
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
						continue;
					}
					finally {
						long took = System.nanoTime() - start;
						maxAcquireNanos.accumulateAndGet(took, Math::max);
						if (took > bound) {
							counts.get("overruns").incrementAndGet();
						}
					}
					try (handle) {
						long token = handle.fencingToken();
						Boolean accepted = transaction.execute((status) -> {
							Map<String, Object> row = jdbc
								.queryForMap("SELECT counter_value, fence FROM chaos_counter WHERE id = 1 FOR UPDATE");
							if (((Number) row.get("fence")).longValue() >= token) {
								return false;
							}
							jdbc.update("UPDATE chaos_counter SET counter_value = ?, fence = ? WHERE id = 1",
									((Number) row.get("counter_value")).longValue() + 1, token);
							jdbc.update("INSERT INTO chaos_log (token, counter_value) VALUES (?, ?)", token,
									((Number) row.get("counter_value")).longValue() + 1);
							return true;
						});
						counts.get(Boolean.TRUE.equals(accepted) ? "increments" : "rejected").incrementAndGet();
					}
					catch (DataAccessException | TransactionException ex) {
						counts.get("workErrors").incrementAndGet();
					}
					catch (DbLockException ex) {
						// a release that could not reach the database: the lease ends on its own
						counts.get("databaseErrors").incrementAndGet();
					}
				}
			});
		}
		counts.forEach((name, count) -> System.out.println(name + "=" + count.get()));
		System.out.println("maxAcquireMillis=" + TimeUnit.NANOSECONDS.toMillis(maxAcquireNanos.get()));
		messages.forEach((message) -> System.out.println("unclear: " + message));
	}

}
