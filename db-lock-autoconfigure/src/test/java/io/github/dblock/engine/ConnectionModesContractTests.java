package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The contract of the transaction and named modes on a real database. Two engines over one
 * data source play two nodes; each thread has transactions and connections of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConnectionModesContractTests {

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private TransactionTemplate transactions;

	private JdbcLockRepository leases;

	private LockEngine nodeA;

	private LockEngine nodeB;

	protected abstract TestDatabase database();

	/** Whether the database has named locks. */
	protected boolean hasNamedLocks() {
		return true;
	}

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(24);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_mode_counter "
				+ "(id INT PRIMARY KEY, counter_value BIGINT, fence BIGINT)");
		this.transactions = new TransactionTemplate(new JdbcTransactionManager(this.dataSource));
		this.leases = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM db_lock_test_mode_counter");
		this.jdbc.update("INSERT INTO db_lock_test_mode_counter (id, counter_value, fence) VALUES (1, 0, 0)");
		this.nodeA = engine();
		this.nodeB = engine();
	}

	private LockEngine engine() {
		return new LockEngine(this.leases, new JdbcConnectionLockRepository(this.leases.connections(), this.dataSource),
				LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
	}

	private static LockRequest request(DbLockMode mode, String key, Duration wait) {
		return new LockRequest(key, wait, Duration.ofSeconds(30), true, Duration.ZERO, mode);
	}

	// the transaction mode

	@Test
	void transactionLocksOfTwoNodesKeepAnExactCounterWithIncreasingTokens() throws Exception {
		int threads = 6;
		int increments = 15;
		AtomicInteger refusedByFence = new AtomicInteger();
		Concurrently.run(threads, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			for (int i = 0; i < increments; i++) {
				this.transactions.executeWithoutResult((status) -> {
					LockHandle lock = node.acquire(request(DbLockMode.TRANSACTION, "counter", LONG_WAIT));
					incrementFenced(lock, refusedByFence);
					assertThat(lock.isHeld()).isTrue();
				});
			}
		});
		assertThat(refusedByFence).hasValue(0);
		assertThat(this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_mode_counter WHERE id = 1",
				Long.class)).isEqualTo((long) threads * increments);
	}

	@Test
	void aTransactionLockIsHeldUntilCommitAndFreeAtOnceAfter() throws Exception {
		CountDownLatch locked = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		List<Optional<LockHandle>> whileHeld = Collections.synchronizedList(new ArrayList<>());
		CompletableFuture<Void> holder = inThread(() -> this.transactions.executeWithoutResult((status) -> {
			LockHandle lock = this.nodeA.acquire(request(DbLockMode.TRANSACTION, "commit", Duration.ZERO));
			// closing the handle ends nothing: the commit does
			lock.close();
			locked.countDown();
			await(commit);
		}));
		await(locked);
		this.transactions.executeWithoutResult((status) -> whileHeld
			.add(this.nodeB.tryAcquire(request(DbLockMode.TRANSACTION, "commit", Duration.ZERO))));
		commit.countDown();
		holder.get(1, TimeUnit.MINUTES);
		assertThat(whileHeld).containsExactly(Optional.empty());
		Boolean heldAfter = this.transactions.execute((status) -> this.nodeB
			.tryAcquire(request(DbLockMode.TRANSACTION, "commit", Duration.ZERO))
			.map(LockHandle::isHeld)
			.orElse(false));
		assertThat(heldAfter).isTrue();
	}

	@Test
	void aWaitThatRunsOutKeepsTheCallersWorkAndIsNotShorterThanAsked() throws Exception {
		CountDownLatch locked = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(1);
		CompletableFuture<Void> holder = inThread(() -> this.transactions.executeWithoutResult((status) -> {
			this.nodeA.acquire(request(DbLockMode.TRANSACTION, "timeout", Duration.ZERO));
			locked.countDown();
			await(done);
		}));
		await(locked);
		Duration wait = Duration.ofMillis(1500);
		long[] waited = new long[1];
		try {
			this.transactions.executeWithoutResult((status) -> {
				this.jdbc.update("UPDATE db_lock_test_mode_counter SET counter_value = 7 WHERE id = 1");
				long start = System.nanoTime();
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> this.nodeB.acquire(request(DbLockMode.TRANSACTION, "timeout", wait)))
					.withMessageContaining("within");
				waited[0] = System.nanoTime() - start;
				// the caller's transaction goes on after the timeout
				this.jdbc.update("UPDATE db_lock_test_mode_counter SET fence = 3 WHERE id = 1");
			});
		}
		finally {
			done.countDown();
			holder.get(1, TimeUnit.MINUTES);
		}
		assertThat(Duration.ofNanos(waited[0])).isGreaterThanOrEqualTo(wait);
		assertThat(this.jdbc.queryForList("SELECT counter_value, fence FROM db_lock_test_mode_counter WHERE id = 1"))
			.singleElement()
			.satisfies((row) -> {
				assertThat(((Number) row.values().toArray()[0]).longValue()).isEqualTo(7);
				assertThat(((Number) row.values().toArray()[1]).longValue()).isEqualTo(3);
			});
	}

	/**
	 * Two transactions lock two keys in opposite order: the database reports a deadlock to
	 * one of them. Where it rolls back that whole transaction (MySQL, MariaDB, H2), the
	 * victim's first lock and its write are gone: its handle must say so and no further
	 * lock may be taken in what is left of it. Where it rolls back the statement alone
	 * (PostgreSQL, in the mode's savepoint), the first lock and the write stay, and the
	 * handle says held. Every pair of facts that disagree is a violation.
	 */
	@Test
	void aDeadlockThatRollsBackTheTransactionEndsItsLocksAndIsNeverRetriedInsideIt() throws Exception {
		int rounds = 5;
		AtomicInteger handleSaysHeldButRolledBack = new AtomicInteger();
		AtomicInteger handleSaysLostButIntact = new AtomicInteger();
		AtomicInteger lockedInsideRolledBack = new AtomicInteger();
		AtomicInteger unclearFailure = new AtomicInteger();
		AtomicInteger victims = new AtomicInteger();
		AtomicInteger rolledBack = new AtomicInteger();
		AtomicInteger commitRefused = new AtomicInteger();
		AtomicInteger committedWithoutItsLocks = new AtomicInteger();
		for (int round = 0; round < rounds; round++) {
			this.jdbc.update("DELETE FROM db_lock_test_mode_counter WHERE id IN (21, 22)");
			this.jdbc.update("INSERT INTO db_lock_test_mode_counter (id, counter_value, fence) VALUES (21, 0, 0)");
			this.jdbc.update("INSERT INTO db_lock_test_mode_counter (id, counter_value, fence) VALUES (22, 0, 0)");
			java.util.concurrent.CyclicBarrier bothHoldOne = new java.util.concurrent.CyclicBarrier(2);
			String prefix = "deadlock-" + round + "-";
			Concurrently.run(2, (thread) -> {
				LockEngine node = (thread == 0) ? this.nodeA : this.nodeB;
				try {
				this.transactions.executeWithoutResult((status) -> {
					LockHandle first = node.acquire(request(DbLockMode.TRANSACTION, prefix + thread, Duration.ZERO));
					this.jdbc.update("UPDATE db_lock_test_mode_counter SET counter_value = 1 WHERE id = ?", 21 + thread);
					try {
						bothHoldOne.await(1, TimeUnit.MINUTES);
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
					try {
						node.acquire(request(DbLockMode.TRANSACTION, prefix + (1 - thread), Duration.ofSeconds(20)));
						return;
					}
					catch (DbLockException ex) {
						victims.incrementAndGet();
						// the caller's own write, read in its own transaction: gone if the database rolled it back
						boolean intact = this.jdbc.queryForObject(
								"SELECT counter_value FROM db_lock_test_mode_counter WHERE id = ?", Long.class,
								21 + thread) == 1;
						if (!intact) {
							rolledBack.incrementAndGet();
							if (first.isHeld()) {
								handleSaysHeldButRolledBack.incrementAndGet();
							}
							if (!String.valueOf(ex.getMessage()).contains("rolled back")) {
								unclearFailure.incrementAndGet();
							}
							try {
								if (node.tryAcquire(request(DbLockMode.TRANSACTION, prefix + "after-" + thread,
										Duration.ZERO)).isPresent()) {
									lockedInsideRolledBack.incrementAndGet();
								}
							}
							catch (DbLockException refused) {
								// refused: the transaction is gone
							}
							// a caller that goes on: what it writes now must never commit without its locks
							this.jdbc.update("UPDATE db_lock_test_mode_counter SET counter_value = 2 WHERE id = ?",
									21 + thread);
							return;
						}
						else if (!first.isHeld()) {
							handleSaysLostButIntact.incrementAndGet();
						}
					}
					status.setRollbackOnly();
				});
				}
				catch (io.github.dblock.LockLostException ex) {
					commitRefused.incrementAndGet();
				}
			});
			for (int id = 21; id <= 22; id++) {
				if (this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_mode_counter WHERE id = ?", Long.class,
						id) == 2) {
					committedWithoutItsLocks.incrementAndGet();
				}
			}
		}
		System.out.println(getClass().getSimpleName() + " deadlocks: rounds=" + rounds + " victims=" + victims
				+ " rolledBackByTheDatabase=" + rolledBack + " handleSaysHeldButRolledBack=" + handleSaysHeldButRolledBack
				+ " handleSaysLostButIntact=" + handleSaysLostButIntact + " lockedInsideRolledBack="
				+ lockedInsideRolledBack + " unclearFailure=" + unclearFailure + " commitRefused=" + commitRefused
				+ " committedWithoutItsLocks=" + committedWithoutItsLocks);
		assertThat(victims).hasValue(rounds);
		assertThat(committedWithoutItsLocks).hasValue(0);
		assertThat(commitRefused).hasValue(rolledBack.get());
		assertThat(handleSaysHeldButRolledBack).hasValue(0);
		assertThat(handleSaysLostButIntact).hasValue(0);
		assertThat(lockedInsideRolledBack).hasValue(0);
		assertThat(unclearFailure).hasValue(0);
	}

	@Test
	void theTransactionModeOutsideATransactionIsAClearError() {
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(request(DbLockMode.TRANSACTION, "none", Duration.ZERO)))
			.withMessageContaining("no Spring transaction is active");
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_keys WHERE lock_key = 'none'", Integer.class))
			.isZero();
	}

	@Test
	void aTransactionTakesItsKeyAgainAsTheSameHoldAndTokensIncreasePastARollback() {
		long[] tokens = new long[3];
		this.transactions.executeWithoutResult((status) -> {
			LockHandle first = this.nodeA.acquire(request(DbLockMode.TRANSACTION, "again", Duration.ZERO));
			LockHandle second = this.nodeA.acquire(request(DbLockMode.TRANSACTION, "again", Duration.ZERO));
			tokens[0] = first.fencingToken();
			assertThat(second.fencingToken()).isEqualTo(tokens[0]);
			status.setRollbackOnly();
		});
		this.transactions.executeWithoutResult((status) -> tokens[1] = this.nodeB
			.acquire(request(DbLockMode.TRANSACTION, "again", Duration.ZERO))
			.fencingToken());
		this.transactions.executeWithoutResult((status) -> tokens[2] = this.nodeA
			.acquire(request(DbLockMode.TRANSACTION, "again", Duration.ZERO))
			.fencingToken());
		// counted in statements of their own: a rolled-back holder's token stays used
		assertThat(tokens[1]).isGreaterThan(tokens[0]);
		assertThat(tokens[2]).isGreaterThan(tokens[1]);
	}

	@Test
	void aHandleOfTheTransactionModeIsNotHeldOnceTheTransactionEnded() {
		LockHandle handle = this.transactions
			.execute((status) -> this.nodeA.acquire(request(DbLockMode.TRANSACTION, "ended", Duration.ZERO)));
		assertThat(handle.isHeld()).isFalse();
		assertThatExceptionOfType(DbLockException.class).isThrownBy(handle::fencingToken)
			.withMessageContaining("ended with the transaction");
		// not closed by the caller, yet no longer among the thread's locks
		assertThat(io.github.dblock.DbLockContext.current()).isEmpty();
	}

	// the named mode

	@Test
	void namedLocksOfTwoNodesKeepAnExactCounterWithIncreasingTokens() throws Exception {
		assumeTrue(hasNamedLocks(), "no named locks on this database");
		int threads = 6;
		int increments = 15;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger refusedByFence = new AtomicInteger();
		Concurrently.run(threads, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			for (int i = 0; i < increments; i++) {
				try (LockHandle lock = node.acquire(request(DbLockMode.NAMED, "counter", LONG_WAIT))) {
					if (inside.incrementAndGet() > 1) {
						overlaps.incrementAndGet();
					}
					incrementFenced(lock, refusedByFence);
					inside.decrementAndGet();
				}
			}
		});
		assertThat(overlaps).hasValue(0);
		assertThat(refusedByFence).hasValue(0);
		assertThat(this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_mode_counter WHERE id = 1",
				Long.class)).isEqualTo((long) threads * increments);
	}

	/**
	 * A named lock whose last handle is closed inside a transaction stays held until the
	 * transaction completes, by commit or by rollback; its thread takes it again meanwhile.
	 */
	@Test
	void aNamedLockReleasedInsideATransactionIsHeldUntilItCompletes() {
		assumeTrue(hasNamedLocks(), "no named locks on this database");
		for (boolean rollback : new boolean[] { false, true }) {
			this.transactions.executeWithoutResult((status) -> {
				long token;
				try (LockHandle handle = this.nodeA.acquire(request(DbLockMode.NAMED, "named-in-transaction", Duration.ZERO))) {
					token = handle.fencingToken();
				}
				assertThat(this.nodeB.tryAcquire(request(DbLockMode.NAMED, "named-in-transaction", Duration.ZERO))).isEmpty();
				try (LockHandle again = this.nodeA.acquire(request(DbLockMode.NAMED, "named-in-transaction", Duration.ZERO))) {
					assertThat(again.fencingToken()).isEqualTo(token);
				}
				if (rollback) {
					status.setRollbackOnly();
				}
			});
			this.nodeB.tryAcquire(request(DbLockMode.NAMED, "named-in-transaction", Duration.ZERO)).orElseThrow().close();
		}
	}

	@Test
	void aNamedLockIsReentrantAndFreeForAnotherNodeWhenReleased() {
		assumeTrue(hasNamedLocks(), "no named locks on this database");
		LockHandle outer = this.nodeA.acquire(request(DbLockMode.NAMED, "reentrant", Duration.ZERO));
		LockHandle inner = this.nodeA.acquire(request(DbLockMode.NAMED, "reentrant", Duration.ZERO));
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(this.nodeB.tryAcquire(request(DbLockMode.NAMED, "reentrant", Duration.ZERO))).isEmpty();
		inner.close();
		assertThat(outer.isHeld()).isTrue();
		assertThat(this.nodeB.tryAcquire(request(DbLockMode.NAMED, "reentrant", Duration.ZERO))).isEmpty();
		long outerToken = outer.fencingToken();
		outer.close();
		assertThat(outer.isHeld()).isFalse();
		try (LockHandle other = this.nodeB.acquire(request(DbLockMode.NAMED, "reentrant", Duration.ZERO))) {
			assertThat(other.fencingToken()).isGreaterThan(outerToken);
		}
	}

	@Test
	void aNamedWaitThatRunsOutIsNotShorterThanAsked() throws Exception {
		assumeTrue(hasNamedLocks(), "no named locks on this database");
		try (LockHandle held = this.nodeA.acquire(request(DbLockMode.NAMED, "named-timeout", Duration.ZERO))) {
			Duration wait = Duration.ofMillis(1300);
			long start = System.nanoTime();
			long[] waited = new long[1];
			CompletableFuture<Void> other = inThread(() -> {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> this.nodeB.acquire(request(DbLockMode.NAMED, "named-timeout", wait)));
				waited[0] = System.nanoTime() - start;
			});
			other.get(1, TimeUnit.MINUTES);
			assertThat(Duration.ofNanos(waited[0])).isGreaterThanOrEqualTo(wait);
			assertThat(held.isHeld()).isTrue();
		}
	}

	@Test
	void aShutdownRefusesNamedWaitersAtOnceAndReleasesWhatIsHeld() throws Exception {
		assumeTrue(hasNamedLocks(), "no named locks on this database");
		LockHandle held = this.nodeA.acquire(request(DbLockMode.NAMED, "named-shutdown", Duration.ZERO));
		CompletableFuture<Throwable> refused = new CompletableFuture<>();
		Thread waiter = new Thread(() -> {
			try {
				this.nodeA.acquire(request(DbLockMode.NAMED, "named-shutdown", LONG_WAIT)).close();
				refused.complete(null);
			}
			catch (Throwable ex) {
				refused.complete(ex);
			}
		});
		waiter.start();
		while (waiter.getState() != Thread.State.TIMED_WAITING && !refused.isDone()) {
			Thread.onSpinWait();
		}
		this.nodeA.shutdown(Duration.ZERO);
		assertThat(refused.get(30, TimeUnit.SECONDS)).isInstanceOf(DbLockException.class)
			.hasMessageContaining("shut down");
		assertThat(held.isHeld()).isFalse();
		assertThat(held.lostSince()).isPresent();
		// the holder closes its handle, as it would: nothing is released twice
		held.close();
		assertThat(io.github.dblock.DbLockContext.current()).isEmpty();
		// released in the server: another node takes it
		try (LockHandle other = this.nodeB.acquire(request(DbLockMode.NAMED, "named-shutdown", Duration.ZERO))) {
			assertThat(other.isHeld()).isTrue();
		}
	}

	@Test
	void namedLocksWhereThereAreNoneAreAClearError() {
		assumeTrue(!hasNamedLocks(), "this database has named locks");
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(request(DbLockMode.NAMED, "none", Duration.ZERO)))
			.withMessageContaining("not available on");
		assertThat(this.nodeA.unavailable(DbLockMode.NAMED)).isPresent();
	}

	/** Reads the counter and writes it one up with the lock's token, counting a write the fence refused. */
	private void incrementFenced(LockHandle lock, AtomicInteger refusedByFence) {
		long value = this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_mode_counter WHERE id = 1",
				Long.class);
		long token = lock.fencingToken();
		if (this.jdbc.update("UPDATE db_lock_test_mode_counter SET counter_value = ?, fence = ? WHERE id = 1 AND fence < ?",
				value + 1, token, token) == 0) {
			refusedByFence.incrementAndGet();
		}
	}

	/** Runs a task on a thread of its own; the future fails with what the task threw. */
	private static CompletableFuture<Void> inThread(Runnable task) {
		CompletableFuture<Void> done = new CompletableFuture<>();
		new Thread(() -> {
			try {
				task.run();
				done.complete(null);
			}
			catch (Throwable ex) {
				done.completeExceptionally(ex);
			}
		}).start();
		return done;
	}

	private static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(1, TimeUnit.MINUTES)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
