package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.CountingLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The contract of the semaphore mode on a real database, with real threads; two engines
 * over one data source play two JVMs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SemaphoreContractTests {

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private CountingLockRepository leases;

	private LockEngine nodeA;

	private LockEngine nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(24);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.leases = new CountingLockRepository(
				new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource)));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_semaphore");
		this.nodeA = new LockEngine(this.leases, LockEngineSettings.of(BACKOFF));
		this.nodeB = new LockEngine(this.leases, LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
	}

	private static LockRequest permit(String key, int permits, Duration wait) {
		return new LockRequest(key, wait, LEASE, true, Duration.ZERO, DbLockMode.SEMAPHORE, permits);
	}

	private int rows(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + " WHERE lock_key LIKE ?",
				Integer.class, key + "#permit-%");
	}

	@Test
	void noMoreHoldersThanPermitsAcrossTwoEnginesAndTokensIncreasePerPermit() throws Exception {
		int permits = 3;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger violations = new AtomicInteger();
		AtomicInteger cycles = new AtomicInteger();
		Map<String, List<Long>> tokens = new ConcurrentHashMap<>();
		Concurrently.run(12, (thread) -> {
			LockEngine engine = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			for (int i = 0; i < 25; i++) {
				try (LockHandle handle = engine.acquire(permit("exports", permits, LONG_WAIT))) {
					int now = inside.incrementAndGet();
					most.accumulateAndGet(now, Math::max);
					if (now > permits) {
						violations.incrementAndGet();
					}
					// a permit key has one holder at a time: its list is in acquisition order
					tokens.computeIfAbsent(handle.key(), (k) -> new ArrayList<>()).add(handle.fencingToken());
					LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(ThreadLocalRandom.current().nextInt(200, 2000)));
					inside.decrementAndGet();
				}
				cycles.incrementAndGet();
			}
		});
		assertThat(violations).hasValue(0);
		assertThat(most).hasValue(permits);
		assertThat(cycles).hasValue(12 * 25);
		assertThat(tokens.keySet()).containsExactlyInAnyOrder("exports#permit-0", "exports#permit-1", "exports#permit-2");
		tokens.forEach((key, list) -> assertThat(list).as(key).isSorted().doesNotHaveDuplicates());
		assertThat(rows("exports")).isZero();
	}

	@Test
	void eachPermitIsARowOfItsOwnWithItsOwnToken() {
		try (LockHandle first = this.nodeA.acquire(permit("rows", 2, LONG_WAIT));
				LockHandle second = this.nodeB.acquire(permit("rows", 2, LONG_WAIT))) {
			assertThat(List.of(first.key(), second.key())).containsExactlyInAnyOrder("rows#permit-0", "rows#permit-1");
			assertThat(first.fencingToken()).isNotEqualTo(second.fencingToken());
			assertThat(rows("rows")).isEqualTo(2);
			assertThat(this.nodeA.tryAcquire(permit("rows", 2, Duration.ZERO))).isEmpty();
			assertThat(first.isHeld()).isTrue();
			assertThat(this.nodeA.held()).extracting(HeldKey::mode).containsOnly(DbLockMode.SEMAPHORE);
		}
		assertThat(rows("rows")).isZero();
	}

	@Test
	void aThreadAskingAgainTakesASecondPermitAndTheContextListsBoth() {
		try (LockHandle first = this.nodeA.acquire(permit("again", 2, LONG_WAIT));
				LockHandle second = this.nodeA.acquire(permit("again", 2, LONG_WAIT))) {
			assertThat(second.key()).isNotEqualTo(first.key());
			assertThat(DbLockContext.all()).containsExactly(first, second);
			assertThat(this.nodeA.tryAcquire(permit("again", 2, Duration.ZERO))).isEmpty();
		}
		assertThat(DbLockContext.all()).isEmpty();
	}

	@Test
	void anotherNumberOfPermitsIsRefusedOnTheSameAndAnotherNode() {
		this.nodeA.acquire(permit("numbered", 3, LONG_WAIT)).close();
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeB.acquire(permit("numbered", 5, LONG_WAIT)))
			.withMessageContaining("Semaphore 'numbered' has 3 permits, not 5");
		try (LockHandle held = this.nodeA.acquire(permit("numbered", 3, LONG_WAIT))) {
			assertThatExceptionOfType(DbLockException.class)
				.isThrownBy(() -> this.nodeA.acquire(permit("numbered", 2, LONG_WAIT)))
				.withMessageContaining("has 3 permits, not 2");
		}
		this.nodeB.acquire(permit("numbered", 3, LONG_WAIT)).close();
	}

	@Test
	void aWaitThatRunsOutWhileEveryPermitIsHeldFails() {
		try (LockHandle held = this.nodeA.acquire(permit("full", 1, LONG_WAIT))) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeB.acquire(permit("full", 1, Duration.ofMillis(200))));
			assertThat(held.isHeld()).isTrue();
		}
	}

	@Test
	void aPermitWhoseHolderStoppedRenewingIsFreedWhenItsLeaseEnds() {
		// a holder that stops (a crash) leaves its row until its lease ends
		LockHandle dead = this.nodeA.acquire(new LockRequest("crash", LONG_WAIT, Duration.ofMillis(800), false,
				Duration.ZERO, DbLockMode.SEMAPHORE, 1));
		long deadToken = dead.fencingToken();
		try (LockHandle next = this.nodeB.acquire(permit("crash", 1, LONG_WAIT))) {
			assertThat(next.key()).isEqualTo(dead.key());
			assertThat(next.fencingToken()).isGreaterThan(deadToken);
			assertThat(dead.isHeld()).isFalse();
			assertThat(dead.lostSince()).isPresent();
		}
		dead.close();
	}

	@Test
	void threadsOfOneEngineWaitLocallyAndSendNoStatementWhileItsOwnThreadsHoldEveryPermit() throws Exception {
		LockHandle first = this.nodeA.acquire(permit("local", 2, LONG_WAIT));
		LockHandle second = this.nodeA.acquire(permit("local", 2, LONG_WAIT));
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<Long>> waiters = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				waiters.add(pool.submit(() -> {
					try (LockHandle handle = this.nodeA.acquire(permit("local", 2, LONG_WAIT))) {
						return handle.fencingToken();
					}
				}));
			}
			// one asks (in its pauses), three wait behind it in this JVM
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.nodeA.waiting().equals(List.of(new WaitingKey("local", DbLockMode.SEMAPHORE, 3))));
			int before = this.leases.acquireCalls();
			// pauses of the one asking thread come and go; no attempt reaches the database
			await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
				.until(() -> this.leases.acquireCalls() == before);
			first.close();
			second.close();
			for (Future<Long> waiter : waiters) {
				assertThat(waiter.get(60, TimeUnit.SECONDS)).isPositive();
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aReleaseInsideATransactionWaitsForItsCommit() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		String[] key = new String[1];
		transactions.executeWithoutResult((status) -> {
			LockHandle handle = this.nodeA.acquire(permit("deferred", 1, LONG_WAIT));
			key[0] = handle.key();
			handle.close();
			// closed, but its transaction has not completed: still held
			assertThat(this.nodeB.tryAcquire(permit("deferred", 1, Duration.ZERO))).isEmpty();
			assertThat(rows("deferred")).isEqualTo(1);
		});
		assertThat(rows("deferred")).isZero();
		Optional<LockHandle> after = this.nodeB.tryAcquire(permit("deferred", 1, Duration.ZERO));
		assertThat(after).isPresent();
		after.get().close();
	}

	@Test
	void aPermitReleasedInsideATransactionIsTheOneItsThreadTakesAgainThere() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		transactions.executeWithoutResult((status) -> {
			for (int i = 0; i < 3; i++) {
				// one permit, released at the commit: this thread takes it again, no other thread could
				LockHandle handle = this.nodeA.acquire(permit("batch", 1, Duration.ofMillis(200)));
				assertThat(handle.key()).isEqualTo("batch#permit-0");
				handle.close();
			}
			assertThat(this.nodeB.tryAcquire(permit("batch", 1, Duration.ZERO))).isEmpty();
		});
		Optional<LockHandle> after = this.nodeB.tryAcquire(permit("batch", 1, Duration.ZERO));
		assertThat(after).isPresent();
		after.get().close();
	}

	@Test
	void anEngineWhoseThreadsKeepEveryPermitBusyLetsAnotherEnginesWaiterIn() throws Exception {
		// two permits, six threads of node A taking them in turn without a pause; node B's
		// caller must get one within its wait: at the end of A's turn a permit B asked for
		// is ceded, and A holds back, whichever of A's permits is released next
		LockEngine busy = new LockEngine(this.leases,
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50)))
					.withLocalTurn(Duration.ofMillis(100)));
		AtomicBoolean stop = new AtomicBoolean();
		ExecutorService pool = Executors.newFixedThreadPool(6);
		try {
			List<Future<Integer>> threads = new ArrayList<>();
			for (int t = 0; t < 6; t++) {
				threads.add(pool.submit(() -> {
					int cycles = 0;
					while (!stop.get()) {
						try (LockHandle handle = busy.acquire(permit("busy", 2, LONG_WAIT))) {
							LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
						}
						cycles++;
					}
					return cycles;
				}));
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> !busy.waiting().isEmpty());
			for (int i = 0; i < 5; i++) {
				try (LockHandle handle = this.nodeB.acquire(permit("busy", 2, Duration.ofSeconds(10)))) {
					assertThat(handle.isHeld()).isTrue();
				}
			}
			stop.set(true);
			for (Future<Integer> thread : threads) {
				assertThat(thread.get(60, TimeUnit.SECONDS)).isPositive();
			}
		}
		finally {
			stop.set(true);
			pool.shutdownNow();
			busy.close();
		}
	}

	@Test
	void aThreadTakesItsOwnPermitReleasedInItsTransactionAheadOfAnotherWaitingThread() throws Exception {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		ExecutorService pool = Executors.newFixedThreadPool(1);
		try {
			transactions.executeWithoutResult((status) -> {
				this.nodeA.acquire(permit("own", 1, LONG_WAIT)).close();
				AtomicReference<Thread> other = new AtomicReference<>();
				Future<Long> waiting = pool.submit(() -> {
					other.set(Thread.currentThread());
					try (LockHandle handle = this.nodeA.acquire(permit("own", 1, LONG_WAIT))) {
						return handle.fencingToken();
					}
				});
				HoldBackScenario.awaitParked(other);
				// the other thread waits for the commit; this one takes its own permit again
				try (LockHandle again = this.nodeA.acquire(permit("own", 1, Duration.ofSeconds(1)))) {
					assertThat(again.key()).isEqualTo("own#permit-0");
				}
				assertThat(waiting).isNotDone();
			});
		}
		finally {
			pool.shutdown();
			assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
		}
	}

	@Test
	void aFixedLeasePermitReleasedInTheTransactionIsNotTakenAgainWithARenewedLeaseAndNoExceptionSaysSo() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		transactions.executeWithoutResult((status) -> {
			this.nodeA.acquire(new LockRequest("fixed", LONG_WAIT, Duration.ofSeconds(20), false, Duration.ZERO,
					DbLockMode.SEMAPHORE, 1)).close();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeA.acquire(permit("fixed", 1, Duration.ofMillis(200))));
		});
	}

	@Test
	void theHoldBackAfterACedeOutlivesTheThreadsThatWaited() throws Exception {
		// node A: a turn over at once, a hold-back of 1.5 s; node B pauses 0.5 to 1 s
		LockEngine ceding = new LockEngine(this.leases,
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofSeconds(1)))
					.withLocalTurn(Duration.ofNanos(1)));
		LockEngine slow = new LockEngine(this.leases, LockEngineSettings.of(new Backoff(Duration.ofSeconds(1),
				Duration.ofSeconds(1))));
		ExecutorService pool = Executors.newFixedThreadPool(2);
		try {
			LockHandle held = ceding.acquire(permit("kept", 1, LONG_WAIT));
			AtomicReference<Thread> waiter = new AtomicReference<>();
			Future<?> local = pool.submit(() -> {
				waiter.set(Thread.currentThread());
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> ceding.acquire(permit("kept", 1, Duration.ofMillis(600))));
				return null;
			});
			HoldBackScenario.awaitParked(waiter);
			Future<Long> remote = pool.submit(() -> {
				try (LockHandle handle = slow.acquire(permit("kept", 1, LONG_WAIT))) {
					return handle.fencingToken();
				}
			});
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
						+ " WHERE lock_key = 'kept#permit-0' AND wanted_at IS NOT NULL", Integer.class) == 1);
			held.close();
			// ceded: A's waiting thread gives up during the hold-back, and its entry goes
			local.get(60, TimeUnit.SECONDS);
			// a thread of A that comes now still holds back: the permit is B's to take
			assertThat(ceding.tryAcquire(permit("kept", 1, Duration.ZERO))).isEmpty();
			assertThat(remote.get(60, TimeUnit.SECONDS)).isPositive();
		}
		finally {
			pool.shutdownNow();
			ceding.close();
			slow.close();
		}
	}

	@Test
	void aLeaseKeyShapedLikeAPermitsKeyIsRefused() {
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(LockRequest.of("exports#permit-0", LONG_WAIT, LEASE)))
			.withMessageContaining("semaphore's permit");
		this.nodeA.acquire(LockRequest.of("exports#permit-x", LONG_WAIT, LEASE)).close();
	}

	@Test
	void permitsOutsideTheSemaphoreModeAreRefused() {
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> new LockRequest("k", LONG_WAIT, LEASE, true, Duration.ZERO, DbLockMode.LEASE, 2));
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> permit("k", 0, LONG_WAIT));
	}

	@Test
	void aPermitAnotherEngineWantsIsCededAtTheEndOfALocalTurnAndThisEngineHoldsBack() throws Exception {
		// node A: a turn that is over at once, and a hold-back (1.5 x its longest pause) far
		// longer than node B's longest pause, so that B's next attempt surely comes first
		LockEngine turnsOver = new LockEngine(this.leases,
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofSeconds(1)))
					.withLocalTurn(Duration.ofNanos(1)));
		LockEngine quick = new LockEngine(this.leases, LockEngineSettings.of(new Backoff(Duration.ofMillis(1),
				Duration.ofMillis(10))));
		ExecutorService pool = Executors.newFixedThreadPool(2);
		try {
			LockHandle held = turnsOver.acquire(permit("ceded", 1, LONG_WAIT));
			List<String> order = new CopyOnWriteArrayList<>();
			AtomicReference<Thread> waiter = new AtomicReference<>();
			Future<?> local = pool.submit(() -> {
				waiter.set(Thread.currentThread());
				try (LockHandle handle = turnsOver.acquire(permit("ceded", 1, LONG_WAIT))) {
					order.add("A");
				}
				return null;
			});
			// A's waiting thread pauses (the permit is its own engine's: no statement)
			HoldBackScenario.awaitParked(waiter);
			// B's attempts mark the permit as wanted
			Future<?> remote = pool.submit(() -> {
				try (LockHandle handle = quick.acquire(permit("ceded", 1, LONG_WAIT))) {
					order.add("B");
				}
				return null;
			});
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
						+ " WHERE lock_key = 'ceded#permit-0' AND wanted_at IS NOT NULL", Integer.class) == 1);
			held.close();
			remote.get(60, TimeUnit.SECONDS);
			local.get(60, TimeUnit.SECONDS);
			assertThat(order).containsExactly("B", "A");
		}
		finally {
			pool.shutdownNow();
			turnsOver.close();
			quick.close();
		}
	}

	@Test
	void aPermitNoOtherEngineWantsPassesToTheWaitingThreadOfItsEngine() throws Exception {
		// the same engine, and a waiter of this engine's alone: no hold-back, the waiting
		// thread is woken by the release, long before its pause (up to 5 s) would end
		LockEngine turnsOver = new LockEngine(this.leases,
				LockEngineSettings.of(new Backoff(Duration.ofMinutes(4), Duration.ofMinutes(4)))
					.withLocalTurn(Duration.ofNanos(1)));
		ExecutorService pool = Executors.newFixedThreadPool(1);
		try {
			LockHandle held = turnsOver.acquire(permit("woken", 1, Duration.ofMinutes(5)));
			int before = this.leases.acquireCalls();
			AtomicReference<Thread> waiter = new AtomicReference<>();
			Future<Integer> local = pool.submit(() -> {
				waiter.set(Thread.currentThread());
				try (LockHandle handle = turnsOver.acquire(permit("woken", 1, Duration.ofMinutes(5)))) {
					return this.leases.acquireCalls() - before;
				}
			});
			// it pauses (at least 2 minutes) without a statement: the permit is its engine's
			HoldBackScenario.awaitParked(waiter);
			assertThat(this.leases.acquireCalls()).isEqualTo(before);
			held.close();
			// woken by the release, not at the end of its pause: one attempt, which takes it
			assertThat(local.get(60, TimeUnit.SECONDS)).isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
			turnsOver.close();
		}
	}

}
