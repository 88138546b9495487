package io.github.dblock.jpa;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.autoconfigure.DbLockCommitGuard;
import io.github.dblock.nodes.NodeSupport;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * db-lock under a {@code JpaTransactionManager} with real Hibernate, whose transaction binds
 * its connection to the thread: the lock's statements must still run on a connection of
 * their own, in autocommit, even with a pool that hands out connections with autocommit
 * off. Another connection sees a lock the moment it is taken, the caller's rollback does not
 * undo it, a read-only transaction does not stop it, and two processes keep an exact count.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JpaIsolationContractTests {

	private static final int PROCESSES = 2;

	private static final int THREADS = 4;

	private static final int INCREMENTS = 20;

	private ConfigurableApplicationContext context;

	private JpaCounterService service;

	private DbLockTemplate locks;

	/** Another pool on the same database: what another node sees. */
	private JdbcTemplate elsewhere;

	/** Transactions on the other data source. */
	private TransactionTemplate elsewhereInTransaction;

	protected abstract TestDatabase database();

	@BeforeAll
	void start() {
		TestDatabase.Connection settings = database().connection();
		database().dataSource(2).close();
		this.context = JpaCounterNode.start(settings.url(), settings.user(), settings.password());
		this.service = this.context.getBean(JpaCounterService.class);
		this.locks = this.context.getBean(DbLockTemplate.class);
		this.elsewhere = new JdbcTemplate(database().dataSource(2));
		this.elsewhereInTransaction = new TransactionTemplate(
				new JdbcTransactionManager(this.elsewhere.getDataSource()));
	}

	@AfterAll
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@BeforeEach
	void reset() {
		JpaCounterRepository counters = this.context.getBean(JpaCounterRepository.class);
		counters.deleteAll();
		counters.save(new JpaCounter(1L));
		this.elsewhere.update("DELETE FROM " + TestDatabase.TABLE);
	}

	@Test
	void theTransactionManagerIsJpas() {
		assertThat(this.context.getBean(PlatformTransactionManager.class)).isInstanceOf(JpaTransactionManager.class);
	}

	@Test
	void theCommitGuardIsOnTheJpaTransactionManager() {
		assertThat(this.context.getBean(DbLockCommitGuard.class).guards(this.context.getBean(JpaTransactionManager.class)))
			.isTrue();
	}

	/**
	 * The commit guard runs on the JPA transaction's connection, before Hibernate flushes:
	 * the lock's row is gone when the transaction commits (another node took the key after a
	 * stall), so the increment is rolled back and the caller gets a {@link LockLostException}.
	 */
	@Test
	void aJpaTransactionWhoseLockWasTakenOverIsRolledBack() {
		assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> this.service.incrementThen(1,
					() -> this.elsewhere.update("DELETE FROM " + TestDatabase.TABLE + " WHERE lock_key LIKE ?",
							"%jpa-counter-1")))
			.withMessageContaining("db-lock.guard-commits");
		assertThat(counter()).isZero();
		// a holder whose lock is still its own commits
		this.service.incrementThen(1, () -> {
		});
		assertThat(counter()).isOne();
	}

	@Test
	void aLockTakenInsideAJpaTransactionIsSeenByAnotherConnectionBeforeTheTransactionEnds() throws Exception {
		int seen = this.service.inTransaction(() -> {
			try (LockHandle handle = this.locks.acquire("jpa-visible", null, null)) {
				assertThat(handle.isHeld()).isTrue();
				// another thread, another connection: a node that looks at the table now
				return CompletableFuture.supplyAsync(() -> lockRows("jpa-visible")).get(30, TimeUnit.SECONDS);
			}
		});
		assertThat(seen).isEqualTo(1);
	}

	@Test
	void aRolledBackJpaTransactionLeavesNoLockAndUndoesItsWork() {
		assertThatIllegalStateException().isThrownBy(() -> this.service.incrementThenFail(1))
			.withMessage("failed after the increment");
		assertThat(lockRows("jpa-counter-1")).isZero();
		assertThat(counter()).isZero();
		// the key is free at once for another node
		assertThat(this.locks.tryExecute("jpa-counter-1", () -> {
		})).isTrue();
	}

	@Test
	void aLockIsTakenInsideAReadOnlyJpaTransaction() {
		assertThat(this.service.readUnderLock(1)).isZero();
		assertThat(lockRows("jpa-read-1")).isZero();
	}

	@Test
	void aReleaseInsideAJpaTransactionWaitsForItsCommit() throws Exception {
		int seenBeforeCommit = this.service.inTransaction(() -> {
			this.locks.execute("jpa-after-commit", () -> null);
			return CompletableFuture.supplyAsync(() -> lockRows("jpa-after-commit")).get(30, TimeUnit.SECONDS);
		});
		assertThat(seenBeforeCommit).isEqualTo(1);
		assertThat(lockRows("jpa-after-commit")).isZero();
	}

	@Test
	void theTransactionModeLocksOnTheJpaTransactionsConnectionUntilItsCommit() throws Exception {
		boolean lockedForOthers = this.service.inTransaction(() -> {
			LockHandle handle = this.locks.acquire(DbLockMode.TRANSACTION, "jpa-row-lock", Duration.ZERO);
			assertThat(handle.isHeld()).isTrue();
			// another thread, another connection, another transaction: it finds the row locked
			return CompletableFuture.supplyAsync(() -> this.elsewhereInTransaction
				.execute((status) -> this.elsewhere.queryForList("SELECT lock_key FROM " + TestDatabase.TABLE
						+ "_keys WHERE lock_key = ? FOR UPDATE SKIP LOCKED", String.class, "jpa-row-lock")
					.isEmpty()))
				.get(30, TimeUnit.SECONDS);
		});
		assertThat(lockedForOthers).isTrue();
		List<String> freeAfterCommit = this.elsewhereInTransaction.execute((status) -> this.elsewhere
			.queryForList("SELECT lock_key FROM " + TestDatabase.TABLE + "_keys WHERE lock_key = ? FOR UPDATE SKIP LOCKED",
					String.class, "jpa-row-lock"));
		assertThat(freeAfterCommit).hasSize(1);
	}

	@Test
	void threadsUnderLocksOfTheTransactionModeKeepAnExactCount() throws Exception {
		Concurrently.run(THREADS, (thread) -> {
			for (int i = 0; i < INCREMENTS; i++) {
				this.service.incrementUnderRowLock(1);
			}
		});
		assertThat(counter()).isEqualTo((long) THREADS * INCREMENTS);
	}

	@Test
	void twoProcessesOfTheJpaApplicationKeepAnExactCount() throws Exception {
		assumeThat(database()).as("an in-memory H2 database cannot be shared by processes")
			.isIn(TestDatabase.MARIADB, TestDatabase.MYSQL, TestDatabase.POSTGRESQL);
		long done = 0;
		for (Map<String, String> node : NodeSupport.run(PROCESSES, JpaCounterNode.class, database().connection(),
				(node) -> new Object[] { THREADS, INCREMENTS })) {
			done += Long.parseLong(node.get("increments"));
		}
		assertThat(done).isEqualTo((long) PROCESSES * THREADS * INCREMENTS);
		assertThat(counter()).isEqualTo(done);
	}

	private int lockRows(String key) {
		return this.elsewhere.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + " WHERE lock_key = ?",
				Integer.class, key);
	}

	private long counter() {
		return this.elsewhere.queryForObject("SELECT counter_value FROM db_lock_test_jpa_counter WHERE id = 1",
				Long.class);
	}

}
