package io.github.dblock.nodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockConnectionPool;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transaction, named and fair modes between nodes that are separate JVM processes on one
 * database:
 * <ul>
 * <li>two processes of four threads each increment one counter under one key, read-modify-
 * write fenced by the lock's token ({@link ModeCounterNode}): the counter is exact, no two
 * threads ever held the key at once and the fence refused no write;</li>
 * <li>a process that holds the key is killed with SIGKILL ({@link ModeHolderNode}) while
 * this test waits for the key with a long wait: the server ends the dead session and the
 * waiter has the key at once (the time from the kill is printed; the lease mode, run for
 * comparison, needs its lease to run out), with a token not lower than the dead holder's;
 * </li>
 * <li>in the transaction mode, more threads than the pool has connections, each taking the
 * key in a transaction: no call hangs, a failure is a {@link DbLockException} that says
 * why (or the outer transaction's own want of a connection), and the counter matches the
 * calls that completed.</li>
 * </ul>
 */
abstract class ConnectionModesProcessesContractTests {

	private static final int PROCESSES = 2;

	private static final int THREADS = 4;

	private static final int INCREMENTS = 25;

	/** How long the waiter for a killed holder's key waits at most. */
	private static final Duration TAKEOVER_WAIT = Duration.ofSeconds(60);

	private static final int SMALL_POOL = 4;

	private static final int SMALL_POOL_THREADS = 16;

	private static final int SMALL_POOL_CALLS = 3;

	private static final Duration SMALL_POOL_WAIT = Duration.ofSeconds(3);

	private static final Duration SMALL_POOL_CONNECTION_TIMEOUT = Duration.ofSeconds(1);

	protected abstract TestDatabase database();

	@ParameterizedTest
	@EnumSource(value = DbLockMode.class, names = { "TRANSACTION", "NAMED", "FAIR" })
	void threadsOfTwoProcessesNeverHoldAKeyTogether(DbLockMode mode) throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = prepareTables(dataSource);
			String key = "modes-counter-" + mode.name().toLowerCase(Locale.ROOT);
			long start = System.nanoTime();
			for (Map<String, String> node : NodeSupport.run(PROCESSES, ModeCounterNode.class, database().connection(),
					(node) -> new Object[] { mode, key, THREADS, INCREMENTS })) {
				assertThat(node.get("overlaps")).isEqualTo("0");
				assertThat(node.get("refused")).isEqualTo("0");
			}
			System.out.println(database() + " " + mode + ": " + PROCESSES + " processes x " + THREADS + " threads x "
					+ INCREMENTS + " increments in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
			assertThat(jdbc.queryForObject("SELECT counter_value FROM " + ModeNodes.COUNTER_TABLE + " WHERE id = 1",
					Long.class))
				.isEqualTo((long) PROCESSES * THREADS * INCREMENTS);
			assertThat(jdbc.queryForObject("SELECT holders FROM " + ModeNodes.HOLDERS_TABLE + " WHERE id = 1",
					Integer.class))
				.isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(value = DbLockMode.class, names = { "LEASE", "TRANSACTION", "NAMED" })
	void aKilledHoldersKeyIsTakenByAWaiter(DbLockMode mode) throws Exception {
		String key = "modes-killed-" + mode.name().toLowerCase(Locale.ROOT);
		String signal = "holding-" + mode;
		try (HikariDataSource dataSource = database().dataSource(4); LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = prepareTables(dataSource);
			DbLockTemplate template = new DbLockTemplate(engine, "", TAKEOVER_WAIT, ModeHolderNode.LEASE);
			TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			NodeSupport.Node holder = NodeSupport.start(ModeHolderNode.class, database().connection(), mode, key,
					signal);
			ExecutorService waiterThread = Executors.newSingleThreadExecutor();
			try {
				long deadToken = awaitSignal(jdbc, signal, holder);
				assertThat(inMode(mode, transaction, () -> template.tryAcquire(mode, key).map((lock) -> {
					lock.close();
					return true;
				}).orElse(false))).as("the key is free although the holder holds it").isFalse();
				Future<long[]> waiter = waiterThread.submit(() -> inMode(mode, transaction, () -> {
					try (LockHandle lock = template.acquire(mode, key, TAKEOVER_WAIT)) {
						long acquiredAt = System.nanoTime();
						return new long[] { acquiredAt, lock.fencingToken() };
					}
				}));
				if (mode == DbLockMode.TRANSACTION || mode == DbLockMode.NAMED) {
					// the lease and fair modes poll; the others wait in one statement, seen by the server
					awaitWaitingSession(jdbc, waiter);
				}
				long killedAt = System.nanoTime();
				holder.process().destroyForcibly();
				long[] acquired = waiter.get(TAKEOVER_WAIT.toSeconds() + 30, TimeUnit.SECONDS);
				long takeoverMillis = TimeUnit.NANOSECONDS.toMillis(acquired[0] - killedAt);
				System.out.println("takeover ms: " + takeoverMillis + " (" + database() + ", " + mode + ", kill -9 of "
						+ "the holder to acquisition by a waiter; dead holder's token " + deadToken + ", next "
						+ acquired[1] + ")");
				assertThat(acquired[0] - killedAt).isLessThan(TAKEOVER_WAIT.toNanos());
				// every mode counts its tokens in statements committed at once: a dead holder's token stays used
				assertThat(acquired[1]).isGreaterThan(deadToken);
			}
			finally {
				waiterThread.shutdownNow();
				holder.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
	}

	/**
	 * Sharing the pool, a new key's row is created on a connection other than the
	 * transaction's, once: while every connection is held by transactions that wait for
	 * one more, those calls fail when the pool's connection timeout runs out, saying so.
	 * How many complete is left unchecked: it depends on who gets a connection first.
	 */
	@Test
	void transactionModeWithMoreThreadsThanConnectionsSharingThePool() throws Exception {
		SmallPoolOutcome outcome = runSmallPool(false);
		System.out.println(database() + " small pool, TRANSACTION, shared pool: " + outcome);
		outcome.check();
	}

	@Test
	void transactionModeWithMoreThreadsThanConnectionsAndAPoolOfItsOwn() throws Exception {
		SmallPoolOutcome outcome = runSmallPool(true);
		System.out.println(database() + " small pool, TRANSACTION, db-lock's own pool of 2: " + outcome);
		outcome.check();
		assertThat(outcome.lockFailed.get()).as(outcome.failures.toString()).isZero();
		assertThat(outcome.completed.get()).isPositive();
	}

	private SmallPoolOutcome runSmallPool(boolean ownPool) throws Exception {
		String key = "modes-small-pool-" + System.nanoTime();
		SmallPoolOutcome outcome = new SmallPoolOutcome();
		try (HikariDataSource admin = database().dataSource(2)) {
			JdbcTemplate counter = prepareTables(admin);
			TestDatabase.Connection settings = database().connection();
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl(settings.url());
			config.setUsername(settings.user());
			config.setPassword(settings.password());
			config.setMaximumPoolSize(SMALL_POOL);
			config.setConnectionTimeout(SMALL_POOL_CONNECTION_TIMEOUT.toMillis());
			config.setPoolName("small-" + database().name().toLowerCase(Locale.ROOT));
			try (HikariDataSource dataSource = new HikariDataSource(config);
					DbLockConnectionPool own = ownPool
							? new DbLockConnectionPool(dataSource, 2, SMALL_POOL_CONNECTION_TIMEOUT) : null) {
				JdbcLockRepository leases = new JdbcLockRepository((own != null) ? own.dataSource() : dataSource,
						SqlDialects.detect(dataSource, TestDatabase.TABLE));
				try (LockEngine engine = new LockEngine(leases, new JdbcConnectionLockRepository(leases.connections(), dataSource),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
					DbLockTemplate template = new DbLockTemplate(engine, "", SMALL_POOL_WAIT, Duration.ofSeconds(30));
					JdbcTemplate jdbc = new JdbcTemplate(dataSource);
					TransactionTemplate transaction = new TransactionTemplate(
							new DataSourceTransactionManager(dataSource));
					ExecutorService threads = Executors.newFixedThreadPool(SMALL_POOL_THREADS);
					try {
						List<Future<?>> calls = new ArrayList<>();
						CountDownLatch start = new CountDownLatch(1);
						for (int t = 0; t < SMALL_POOL_THREADS; t++) {
							calls.add(threads.submit(() -> {
								// all at once, so that the first calls contend for the pool and the new key's row
								start.await();
								for (int i = 0; i < SMALL_POOL_CALLS; i++) {
									smallPoolCall(template, jdbc, transaction, key, outcome);
								}
								return null;
							}));
						}
						start.countDown();
						long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
						for (Future<?> call : calls) {
							// a generous bound for them all: a hang fails here
							call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
						}
					}
					finally {
						threads.shutdownNow();
					}
				}
			}
			outcome.counter = counter.queryForObject(
					"SELECT counter_value FROM " + ModeNodes.COUNTER_TABLE + " WHERE id = 1", Long.class);
		}
		return outcome;
	}

	private static void smallPoolCall(DbLockTemplate template, JdbcTemplate jdbc, TransactionTemplate transaction,
			String key, SmallPoolOutcome outcome) {
		long start = System.nanoTime();
		try {
			transaction.executeWithoutResult((status) -> {
				// the transaction takes its connection first, as real work does
				jdbc.queryForObject("SELECT 1", Integer.class);
				LockHandle lock = template.acquire(DbLockMode.TRANSACTION, key, SMALL_POOL_WAIT);
				long token = lock.fencingToken();
				long value = jdbc.queryForObject(
						"SELECT counter_value FROM " + ModeNodes.COUNTER_TABLE + " WHERE id = 1", Long.class);
				if (jdbc.update("UPDATE " + ModeNodes.COUNTER_TABLE
						+ " SET counter_value = ?, fence = ? WHERE id = 1 AND fence < ?", value + 1, token,
						token) == 0) {
					throw new IllegalStateException("the fence refused token " + token);
				}
			});
			outcome.completed.incrementAndGet();
		}
		catch (LockAcquisitionException ex) {
			outcome.timedOut.incrementAndGet();
		}
		catch (DbLockException ex) {
			outcome.lockFailed.incrementAndGet();
			outcome.failures.add(ex.getMessage());
		}
		catch (TransactionException ex) {
			// the outer transaction's own want of a connection, before any lock
			outcome.outerWithoutConnection.incrementAndGet();
		}
		catch (RuntimeException ex) {
			outcome.unclear.incrementAndGet();
			outcome.failures.add(ex.toString());
		}
		finally {
			outcome.longestCallNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
		}
	}

	private static final class SmallPoolOutcome {

		final AtomicInteger completed = new AtomicInteger();

		final AtomicInteger timedOut = new AtomicInteger();

		final AtomicInteger lockFailed = new AtomicInteger();

		final AtomicInteger outerWithoutConnection = new AtomicInteger();

		final AtomicInteger unclear = new AtomicInteger();

		final AtomicLong longestCallNanos = new AtomicLong();

		final Set<String> failures = ConcurrentHashMap.newKeySet();

		long counter;

		void check() {
			assertThat(this.unclear.get()).as(this.failures.toString()).isZero();
			assertThat(this.completed.get() + this.timedOut.get() + this.lockFailed.get()
					+ this.outerWithoutConnection.get())
				.isEqualTo(SMALL_POOL_THREADS * SMALL_POOL_CALLS);
			// each says which lock and why: the wait ran out, or the pool had no connection for the key's row
			assertThat(this.failures).allMatch((failure) -> failure.startsWith("Could not acquire lock '"));
			assertThat(this.counter).isEqualTo(this.completed.get());
			// a call waits for its transaction's connection, the key's row (once per key), then the key
			assertThat(Duration.ofNanos(this.longestCallNanos.get()))
				.isLessThan(SMALL_POOL_WAIT.plus(SMALL_POOL_CONNECTION_TIMEOUT.multipliedBy(2))
					.plus(JdbcLockRepository.DEFAULT_STATEMENT_TIMEOUT)
					.plusSeconds(5));
		}

		@Override
		public String toString() {
			return "completed " + this.completed + ", lock wait ran out " + this.timedOut + ", other lock failures "
					+ this.lockFailed + ", outer transaction without a connection " + this.outerWithoutConnection
					+ ", unclear " + this.unclear + ", counter " + this.counter + ", longest call "
					+ TimeUnit.NANOSECONDS.toMillis(this.longestCallNanos.get()) + " ms"
					+ (this.failures.isEmpty() ? "" : ", failures " + this.failures);
		}

	}

	/** Runs an action in a transaction in the transaction mode, in none otherwise. */
	private static <T> T inMode(DbLockMode mode, TransactionTemplate transaction,
			Callable<T> action) throws Exception {
		if (mode != DbLockMode.TRANSACTION) {
			return action.call();
		}
		return transaction.execute((status) -> {
			try {
				return action.call();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	private JdbcTemplate prepareTables(HikariDataSource dataSource) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.COUNTER_TABLE
				+ " (id INT PRIMARY KEY, counter_value BIGINT NOT NULL, fence BIGINT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.HOLDERS_TABLE
				+ " (id INT PRIMARY KEY, holders INT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.SIGNAL_TABLE
				+ " (name VARCHAR(100) PRIMARY KEY, signal_value BIGINT NOT NULL)");
		jdbc.update("DELETE FROM " + ModeNodes.COUNTER_TABLE);
		jdbc.update("INSERT INTO " + ModeNodes.COUNTER_TABLE + " (id, counter_value, fence) VALUES (1, 0, 0)");
		jdbc.update("DELETE FROM " + ModeNodes.HOLDERS_TABLE);
		jdbc.update("INSERT INTO " + ModeNodes.HOLDERS_TABLE + " (id, holders) VALUES (1, 0)");
		jdbc.update("DELETE FROM " + ModeNodes.SIGNAL_TABLE);
		return jdbc;
	}

	/** Polls for the holder's signal row: its token once it holds the key. */
	private static long awaitSignal(JdbcTemplate jdbc, String signal, NodeSupport.Node holder) throws Exception {
		long deadline = System.nanoTime() + NodeSupport.SIGNAL_TIMEOUT.toNanos();
		while (true) {
			List<Long> values = jdbc.queryForList(
					"SELECT signal_value FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = ?", Long.class, signal);
			if (!values.isEmpty()) {
				return values.get(0);
			}
			if (!holder.process().isAlive()) {
				throw new AssertionError("the holder ended before it held the key: "
						+ holder.output().get(10, TimeUnit.SECONDS));
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("the holder did not hold the key within " + NodeSupport.SIGNAL_TIMEOUT);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/** Polls the server until another session waits for a lock: the waiter's statement. */
	private void awaitWaitingSession(JdbcTemplate jdbc, Future<?> waiter) throws Exception {
		String sql = (database() == TestDatabase.POSTGRESQL)
				? "SELECT COUNT(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
						+ "AND datname = current_database() AND wait_event_type = 'Lock'"
				: "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
						+ "AND COMMAND = 'Query' AND (INFO LIKE '%FOR UPDATE WAIT%' OR INFO LIKE '%GET_LOCK(%')";
		long deadline = System.nanoTime() + NodeSupport.SIGNAL_TIMEOUT.toNanos();
		while (jdbc.queryForObject(sql, Integer.class) == 0) {
			if (waiter.isDone()) {
				waiter.get();
				throw new AssertionError("the waiter acquired before the holder was killed");
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("no session waited for the key within " + NodeSupport.SIGNAL_TIMEOUT);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

}
