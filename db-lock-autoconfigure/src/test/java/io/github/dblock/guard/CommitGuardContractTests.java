package io.github.dblock.guard;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.LockRequest;
import io.github.dblock.autoconfigure.DbLockCommitGuard;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.CommitGuard;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The commit guard on a real database: a transaction on the lock table's data source that
 * commits while its thread holds a lease checks the lease's row on its own connection; a
 * row taken over, deleted or past its lease by the database's clock rolls the transaction
 * back with a {@link LockLostException}; a take-over waits for a guarded commit.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CommitGuardContractTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private HikariDataSource dataSource;

	/** Another pool on the same database: its connections are never the transaction's. */
	private HikariDataSource other;

	private JdbcTemplate jdbc;

	private JdbcTemplate outside;

	private JdbcLockRepository repository;

	private LockEngine engine;

	private LockEngine otherNode;

	private DataSourceTransactionManager transactions;

	private DbLockCommitGuard guard;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSources() {
		this.dataSource = database().dataSource(8);
		this.other = database().dataSource(4);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.outside = new JdbcTemplate(this.other);
		this.repository = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
		this.jdbc.execute("DROP TABLE IF EXISTS db_lock_test_guard_counter");
		this.jdbc.execute("CREATE TABLE db_lock_test_guard_counter (id INT PRIMARY KEY, counter_value BIGINT)");
		this.jdbc.update("INSERT INTO db_lock_test_guard_counter VALUES (1, 0)");
	}

	@AfterAll
	void closeDataSources() {
		if (this.dataSource != null) {
			this.jdbc.execute("DROP TABLE IF EXISTS db_lock_test_guard_counter");
			this.dataSource.close();
			this.other.close();
		}
	}

	@BeforeEach
	void createEngines() {
		LockEngineSettings settings = LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(50)));
		this.engine = new LockEngine(this.repository, settings);
		this.otherNode = new LockEngine(new JdbcLockRepository(this.other, database().dialect(this.other)), settings);
		this.transactions = new DataSourceTransactionManager(this.dataSource);
		this.guard = new DbLockCommitGuard(new CommitGuard(this.repository.connections()), this.dataSource,
				new DefaultListableBeanFactory());
		assertThat(this.guard.addTo(this.transactions)).isTrue();
		this.jdbc.update("UPDATE db_lock_test_guard_counter SET counter_value = 0");
	}

	@AfterEach
	void closeEngines() {
		this.engine.close();
		this.otherNode.close();
	}

	private static LockRequest request(DbLockMode mode, String key, Duration lease, boolean renewed) {
		return new LockRequest(key, Duration.ofSeconds(30), lease, renewed, Duration.ZERO, mode);
	}

	private void increment() {
		this.jdbc.update("UPDATE db_lock_test_guard_counter SET counter_value = counter_value + 1 WHERE id = 1");
	}

	private long counter() {
		return this.outside.queryForObject("SELECT counter_value FROM db_lock_test_guard_counter WHERE id = 1", Long.class);
	}

	/** The table that keeps a mode's leases, and the name of its key column. */
	private static String table(DbLockMode mode) {
		return switch (mode) {
			case LEASE -> TestDatabase.TABLE;
			case READ, WRITE -> TestDatabase.TABLE + "_rw";
			case FAIR -> TestDatabase.TABLE + "_fair_queue";
			default -> throw new IllegalArgumentException(mode.toString());
		};
	}

	private static void closeLost(LockHandle handle) {
		try {
			handle.close();
		}
		catch (DbLockException ex) {
			// its row was taken from it by the test
		}
	}

	@ParameterizedTest
	@EnumSource(names = { "LEASE", "READ", "WRITE", "FAIR" })
	void aCommitUnderAHeldLeaseGoesThrough(DbLockMode mode) {
		try (LockHandle handle = this.engine.acquire(request(mode, "guarded-" + mode, LEASE, true))) {
			new TransactionTemplate(this.transactions).executeWithoutResult((status) -> increment());
			assertThat(handle.isHeld()).isTrue();
		}
		assertThat(counter()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(names = { "LEASE", "READ", "WRITE", "FAIR" })
	void aCommitWhoseRowIsGoneIsRolledBack(DbLockMode mode) {
		String key = "taken-" + mode;
		LockHandle handle = this.engine.acquire(request(mode, key, LEASE, false));
		try {
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> new TransactionTemplate(this.transactions).executeWithoutResult((status) -> {
					increment();
					// another owner's take-over, or the reaper after a stall: the row is no longer this holder's
					this.outside.update("DELETE FROM " + table(mode) + " WHERE lock_key = ?", key);
				}))
				.withMessageContaining(key)
				.withMessageContaining("db-lock.guard-commits");
		}
		finally {
			closeLost(handle);
		}
		assertThat(counter()).isZero();
	}

	@ParameterizedTest
	@EnumSource(names = { "LEASE", "WRITE" })
	void aCommitWhoseRowIsAnotherOwnersIsRolledBack(DbLockMode mode) {
		String key = "owned-" + mode;
		LockHandle handle = this.engine.acquire(request(mode, key, LEASE, false));
		try {
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> new TransactionTemplate(this.transactions).executeWithoutResult((status) -> {
					increment();
					this.outside.update("UPDATE " + table(mode) + " SET owner = 'another-owner' WHERE lock_key = ?", key);
				}));
		}
		finally {
			closeLost(handle);
			this.outside.update("DELETE FROM " + table(mode) + " WHERE lock_key = ?", key);
		}
		assertThat(counter()).isZero();
	}

	@ParameterizedTest
	@EnumSource(names = { "LEASE", "READ", "FAIR" })
	void aCommitAfterTheLeaseEndedByTheDatabasesClockIsRolledBack(DbLockMode mode) {
		String key = "ended-" + mode;
		LockHandle handle = this.engine.acquire(request(mode, key, LEASE, false));
		try {
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> new TransactionTemplate(this.transactions).executeWithoutResult((status) -> {
					increment();
					// the lease ends in the database, whatever the JVM's clock says
					this.outside.update("UPDATE " + table(mode) + " SET expires_at = " + database().dialect(this.other).now()
							+ " WHERE lock_key = ?", key);
				}));
			assertThat(handle.isHeld()).as("held by the JVM's clock").isTrue();
		}
		finally {
			closeLost(handle);
			this.outside.update("DELETE FROM " + table(mode) + " WHERE lock_key = ?", key);
		}
		assertThat(counter()).isZero();
	}

	/** Several locks in several tables, one statement per table: all held, the commit goes through; one gone, it fails. */
	@org.junit.jupiter.api.Test
	void everyLockOfTheThreadIsChecked() {
		String[] keys = { "many-a", "many-b", "many-c", "many-d" };
		DbLockMode[] modes = { DbLockMode.LEASE, DbLockMode.LEASE, DbLockMode.WRITE, DbLockMode.FAIR };
		java.util.List<LockHandle> handles = new java.util.ArrayList<>();
		try {
			for (int i = 0; i < keys.length; i++) {
				handles.add(this.engine.acquire(request(modes[i], keys[i], LEASE, false)));
			}
			new TransactionTemplate(this.transactions).executeWithoutResult((status) -> increment());
			assertThat(counter()).isEqualTo(1);
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> new TransactionTemplate(this.transactions).executeWithoutResult((status) -> {
					increment();
					this.outside.update("DELETE FROM " + TestDatabase.TABLE + " WHERE lock_key = ?", "many-b");
				}))
				.withMessageContaining("many-b");
			assertThat(counter()).isEqualTo(1);
		}
		finally {
			handles.forEach(CommitGuardContractTests::closeLost);
		}
	}

	/**
	 * A hold that the engine's shutdown ended while its handle was still open (the method
	 * outlived the grace period): its transaction cannot commit.
	 */
	@ParameterizedTest
	@EnumSource(names = { "LEASE", "WRITE", "FAIR" })
	void aHoldEndedByTheShutdownCannotCommit(DbLockMode mode) {
		String key = "shut-down-" + mode;
		LockHandle handle = this.engine.acquire(request(mode, key, LEASE, true));
		try {
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> new TransactionTemplate(this.transactions).executeWithoutResult((status) -> {
					increment();
					this.engine.shutdown(Duration.ZERO);
				}));
		}
		finally {
			closeLost(handle);
		}
		assertThat(counter()).isZero();
	}

	/** A hold whose handle closes inside the transaction is released after it: it is guarded until then. */
	@ParameterizedTest
	@EnumSource(names = { "LEASE", "READ", "WRITE", "FAIR" })
	void aHoldClosedInsideTheTransactionIsGuardedAtItsCommit(DbLockMode mode) {
		String key = "closed-inside-" + mode;
		assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> new TransactionTemplate(this.transactions).executeWithoutResult((status) -> {
				try (LockHandle handle = this.engine.acquire(request(mode, key, LEASE, false))) {
					increment();
				}
				this.outside.update("DELETE FROM " + table(mode) + " WHERE lock_key = ?", key);
			}));
		assertThat(counter()).isZero();
		// released once the transaction completed
		this.otherNode.tryAcquire(request((mode == DbLockMode.READ) ? DbLockMode.WRITE : mode, key, LEASE, false))
			.orElseThrow()
			.close();
	}

	@ParameterizedTest
	@EnumSource(names = { "LEASE", "WRITE" })
	void aTransactionOnAnotherDataSourceIsNotGuarded(DbLockMode mode) {
		String key = "elsewhere-" + mode;
		LockHandle handle = this.engine.acquire(request(mode, key, LEASE, false));
		try {
			DataSourceTransactionManager elsewhere = new DataSourceTransactionManager(this.other);
			assertThat(this.guard.addTo(elsewhere)).isFalse();
			assertThat(elsewhere.getTransactionExecutionListeners()).isEmpty();
			new TransactionTemplate(elsewhere).executeWithoutResult((status) -> {
				this.outside.update("UPDATE db_lock_test_guard_counter SET counter_value = counter_value + 1 WHERE id = 1");
				this.jdbc.update("DELETE FROM " + table(mode) + " WHERE lock_key = ?", key);
			});
		}
		finally {
			closeLost(handle);
		}
		assertThat(counter()).isEqualTo(1);
	}

	/**
	 * The guard has checked and locked the row, then the commit stalls (a listener after the
	 * guard waits for the test) past the lease's end: another node's take-over waits in the
	 * database until the commit is done, then takes the key with a larger token. In the lease
	 * mode on every database (the take-over writes the row); in the write mode on PostgreSQL,
	 * where the guard takes the shared form of the key's token-order lock.
	 */
	@ParameterizedTest
	@EnumSource(names = { "LEASE", "WRITE" })
	void aTakeOverWaitsForAGuardedCommit(DbLockMode mode) throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(mode == DbLockMode.LEASE || database() == TestDatabase.POSTGRESQL,
				"the read/write take-over is ordered after a guarded commit on PostgreSQL only");
		String key = "racing-commit-" + mode;
		Duration lease = Duration.ofMillis(1500);
		CountDownLatch stalled = new CountDownLatch(1);
		CountDownLatch gate = new CountDownLatch(1);
		this.transactions.addListener(new TransactionExecutionListener() {
			@Override
			public void beforeCommit(TransactionExecution transaction) {
				stalled.countDown();
				try {
					assertThat(gate.await(1, TimeUnit.MINUTES)).isTrue();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		});
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			Future<Long> holder = threads.submit(() -> {
				try (LockHandle handle = this.engine.acquire(request(mode, key, lease, false))) {
					new TransactionTemplate(this.transactions).executeWithoutResult((status) -> increment());
					return handle.fencingToken();
				}
				catch (DbLockException ex) {
					// its release found the row taken over after the commit: the token is what counts
					return -1L;
				}
			});
			assertThat(stalled.await(1, TimeUnit.MINUTES)).isTrue();
			// the lease has ended in the database; the row is locked by the stalled commit
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
				.until(() -> this.outside.queryForObject("SELECT COUNT(*) FROM " + table(mode)
						+ " WHERE lock_key = ? AND expires_at < " + database().dialect(this.other).now(), Integer.class,
						key) == 1);
			Future<long[]> taker = threads.submit(() -> {
				try (LockHandle handle = this.otherNode.acquire(request(mode, key, LEASE, false))) {
					return new long[] { handle.fencingToken(), System.nanoTime() };
				}
			});
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(this::aSessionWaitsForALock);
			assertThat(taker.isDone()).as("taken over while the guarded commit was pending").isFalse();
			long openedAt = System.nanoTime();
			gate.countDown();
			long holderToken = holder.get(1, TimeUnit.MINUTES);
			long[] taken = taker.get(1, TimeUnit.MINUTES);
			System.out.println(database() + " " + mode + ": guarded commit then take-over, tokens " + holderToken
					+ " then " + taken[0]);
			assertThat(taken[1]).as("taken once the commit could go on").isGreaterThan(openedAt);
			assertThat(taken[0]).isGreaterThan(holderToken >= 0 ? holderToken : 0);
		}
		finally {
			gate.countDown();
			threads.shutdownNow();
		}
		assertThat(counter()).isEqualTo(1);
	}

	/** Whether a session of the test database waits for a row lock. */
	private boolean aSessionWaitsForALock() {
		String sql = switch (database()) {
			case POSTGRESQL -> "SELECT COUNT(*) FROM pg_locks WHERE NOT granted";
			case MARIADB, MYSQL -> "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'";
			default -> "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL";
		};
		Long count = this.outside.queryForObject(sql, Long.class);
		return count != null && count > 0;
	}

}
