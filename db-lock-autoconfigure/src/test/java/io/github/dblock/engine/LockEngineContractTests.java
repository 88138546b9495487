package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;
import io.github.dblock.aop.DbLockAdvisor;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.CancelNotSent;
import io.github.dblock.testsupport.CountingLockRepository;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The contract of {@link LockEngine} on a real database. Two engines over one table play
 * two nodes; each counts the calls that reach its repository.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LockEngineContractTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private CountingLockRepository repositoryA;

	private CountingLockRepository repositoryB;

	private LockEngine nodeA;

	private LockEngine nodeB;

	protected abstract TestDatabase database();

	private JdbcLockRepository jdbcRepository;

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(20);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_counter (id INT PRIMARY KEY, counter_value BIGINT)");
		this.jdbcRepository = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	/** Engines of their own for every test: no release of an earlier test is counted in a later one. */
	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		this.jdbc.update("DELETE FROM db_lock_test_counter");
		this.jdbc.update("INSERT INTO db_lock_test_counter (id, counter_value) VALUES (1, 0)");
		this.repositoryA = new CountingLockRepository(this.jdbcRepository);
		this.repositoryB = new CountingLockRepository(this.jdbcRepository);
		this.nodeA = new LockEngine(this.repositoryA, LockEngineSettings.of(BACKOFF));
		this.nodeB = new LockEngine(this.repositoryB, LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
	}

	@Test
	void listenersAreToldOfEachHoldAndTheirFailuresNeverReachTheCall() {
		List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
		LockListener failing = new LockListener() {
			@Override
			public void acquired(String key, DbLockMode mode, long waitedNanos) {
				throw new IllegalStateException("a broken listener");
			}

			@Override
			public void released(String key, DbLockMode mode, long heldNanos) {
				throw new IllegalStateException("a broken listener");
			}
		};
		LockListener recording = new LockListener() {
			@Override
			public void acquired(String key, DbLockMode mode, long waitedNanos) {
				events.add("acquired " + key + " " + mode);
			}

			@Override
			public void notAcquired(String key, DbLockMode mode, Outcome outcome, long waitedNanos) {
				events.add(outcome + " " + key);
			}

			@Override
			public void released(String key, DbLockMode mode, long heldNanos) {
				events.add("released " + key);
			}
		};
		this.nodeA.addListener(failing);
		this.nodeA.addListener(recording);
		this.nodeB.addListener(recording);
		LockRequest request = new LockRequest("told", Duration.ZERO, LEASE, true, Duration.ZERO);
		try (LockHandle outer = this.nodeA.acquire(request)) {
			try (LockHandle inner = this.nodeA.acquire(request)) {
				assertThat(this.nodeA.held()).singleElement()
					.satisfies((held) -> assertThat(held.key()).isEqualTo("told"));
			}
			assertThat(this.nodeB.tryAcquire(request)).isEmpty();
		}
		assertThat(this.nodeA.held()).isEmpty();
		assertThat(events).containsExactly("acquired told LEASE", "acquired told LEASE", "TIMED_OUT told",
				"released told");
	}

	@Test
	void aHandleSaysHowLongItStaysHeldOnTheLocalClock() {
		Duration lease = Duration.ofSeconds(20);
		LockRequest fixed = new LockRequest("remaining", Duration.ZERO, lease, false, Duration.ZERO);
		LockHandle handle = this.nodeA.acquire(fixed);
		Duration left = handle.remaining();
		assertThat(left).isPositive().isLessThanOrEqualTo(lease);
		// it only shrinks while the lease is not renewed
		assertThat(handle.remaining()).isLessThanOrEqualTo(left);
		handle.close();
		assertThat(handle.remaining()).isZero();
		LockRequest several = new LockRequest("remaining-2", Duration.ZERO, lease, false, Duration.ZERO);
		try (LockHandle both = this.nodeA.acquireAll(List.of(fixed, several))) {
			assertThat(both.remaining()).isPositive().isLessThanOrEqualTo(lease);
		}
	}

	@Test
	void threadsOfTwoNodesNeverHoldAKeyTogether() throws Exception {
		int threadsPerNode = 6;
		int incrementsPerThread = 15;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Long> tokensInOrder = java.util.Collections.synchronizedList(new ArrayList<>());
		Concurrently.run(2 * threadsPerNode, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			// half the threads renew their leases (and hand them off locally), half have fixed ones
			LockRequest request = new LockRequest("counter", LONG_WAIT, LEASE, thread % 4 < 2, Duration.ZERO);
			for (int i = 0; i < incrementsPerThread; i++) {
				try (LockHandle lock = node.acquire(request)) {
					if (inside.incrementAndGet() > 1) {
						overlaps.incrementAndGet();
					}
					tokensInOrder.add(lock.fencingToken());
					long value = this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_counter WHERE id = 1",
							Long.class);
					Thread.yield();
					this.jdbc.update("UPDATE db_lock_test_counter SET counter_value = ? WHERE id = 1", value + 1);
					inside.decrementAndGet();
				}
			}
		});
		assertThat(overlaps).hasValue(0);
		assertThat(this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_counter WHERE id = 1", Long.class))
			.isEqualTo(2L * threadsPerNode * incrementsPerThread);
		assertThat(tokensInOrder).hasSize(2 * threadsPerNode * incrementsPerThread).isSorted().doesNotHaveDuplicates();
		awaitNoRow("counter");
	}

	@Test
	void aRenewedLeaseReleasedWhileALocalThreadWaitsPassesToItWithoutSql() throws Exception {
		LockRequest renewed = new LockRequest("passed-on", LONG_WAIT, LEASE, true, Duration.ZERO);
		LockHandle first = this.nodeA.acquire(renewed);
		String owner = this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = 'passed-on'", String.class);
		AtomicReference<Long> secondToken = new AtomicReference<>();
		AtomicInteger callsBySecond = new AtomicInteger(-1);
		CountDownLatch secondHolds = new CountDownLatch(1);
		CountDownLatch secondMayRelease = new CountDownLatch(1);
		Thread second = new Thread(() -> {
			int before = this.repositoryA.acquireCalls() + this.repositoryA.releaseCalls();
			try (LockHandle lock = this.nodeA.acquire(renewed)) {
				callsBySecond.set(this.repositoryA.acquireCalls() + this.repositoryA.releaseCalls() - before);
				secondToken.set(lock.fencingToken());
				secondHolds.countDown();
				secondMayRelease.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		second.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> second.getState() == Thread.State.TIMED_WAITING);
		first.close();
		assertThat(secondHolds.await(1, TimeUnit.MINUTES)).isTrue();
		assertThat(callsBySecond).hasValue(0);
		assertThat(secondToken.get()).isGreaterThan(first.fencingToken());
		assertThat(this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = 'passed-on'", String.class))
			.isEqualTo(owner);
		assertThat(this.nodeB.tryAcquire(LockRequest.of("passed-on", Duration.ZERO, LEASE))).isEmpty();
		secondMayRelease.countDown();
		second.join();
		awaitNoRow("passed-on");
		try (LockHandle next = this.nodeB.acquire(LockRequest.of("passed-on", Duration.ZERO, LEASE))) {
			assertThat(next.fencingToken()).isGreaterThan(secondToken.get());
		}
	}

	@Test
	void aThreadTakesAKeyItHoldsAgainWithoutSql() {
		try (LockHandle outer = this.nodeA.acquire(LockRequest.of("reentrant", LONG_WAIT, LEASE))) {
			try (LockHandle inner = this.nodeA.acquire(LockRequest.of("reentrant", LONG_WAIT, LEASE))) {
				assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
				inner.close();
				inner.close();
			}
			assertThat(this.repositoryA.acquireCalls()).isEqualTo(1);
			assertThat(this.repositoryA.releaseCalls()).isZero();
			assertThat(rows("reentrant")).isEqualTo(1);
			assertThat(this.nodeB.tryAcquire(LockRequest.of("reentrant", Duration.ZERO, LEASE))).isEmpty();
		}
		awaitNoRow("reentrant");
		assertThat(this.repositoryA.releaseCalls()).isEqualTo(1);
	}

	@Test
	void anotherThreadOfTheSameNodeIsNotReentrant() throws Exception {
		try (LockHandle held = this.nodeA.acquire(LockRequest.of("not-reentrant", LONG_WAIT, LEASE))) {
			AtomicReference<Object> result = new AtomicReference<>();
			Thread other = new Thread(() -> result.set(this.nodeA.tryAcquire(LockRequest.of("not-reentrant", Duration.ZERO, LEASE))));
			other.start();
			other.join();
			assertThat(result.get()).isEqualTo(java.util.Optional.empty());
		}
	}

	@Test
	void zeroWaitGivesUpAfterOneAttempt() {
		try (LockHandle held = this.nodeA.acquire(LockRequest.of("fail-fast", LONG_WAIT, LEASE))) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeB.acquire(LockRequest.of("fail-fast", Duration.ZERO, LEASE)))
				.withMessageContaining("fail-fast");
			assertThat(this.repositoryB.acquireCalls()).isEqualTo(1);
		}
	}

	@Test
	void aWaiterGivesUpWhenItsWaitRunsOutAndNotBefore() {
		try (LockHandle held = this.nodeA.acquire(LockRequest.of("slow", LONG_WAIT, LEASE))) {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeB.acquire(LockRequest.of("slow", Duration.ofMillis(500), LEASE)))
				.withMessageContaining("'slow'")
				.satisfies((ex) -> assertThat(ex.getWaited()).isGreaterThanOrEqualTo(Duration.ofMillis(500)));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
			assertThat(this.repositoryB.acquireCalls()).isGreaterThan(1);
		}
	}

	@Test
	void localWaitersQueueSoThatOneAtATimeAsksTheDatabase() throws Exception {
		LockHandle held = this.nodeB.acquire(LockRequest.of("queued", LONG_WAIT, LEASE));
		int waiters = 6;
		CountDownLatch polling = new CountDownLatch(1);
		AtomicInteger acquired = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(waiters);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int i = 0; i < waiters; i++) {
				futures.add(pool.submit(() -> {
					try (LockHandle lock = this.nodeA.acquire(LockRequest.of("queued", LONG_WAIT, LEASE))) {
						acquired.incrementAndGet();
					}
					return null;
				}));
			}
			// the database has seen the head of the local queue poll a few times
			await().atMost(Duration.ofSeconds(30)).until(() -> this.repositoryA.acquireCalls() >= 5);
			// the others wait behind it, in this JVM
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.nodeA.waiting().equals(List.of(new WaitingKey("queued", DbLockMode.LEASE, waiters - 1))));
			assertThat(this.nodeA.localWaiters()).isEqualTo(waiters - 1);
			assertThat(this.nodeB.waiting()).isEmpty();
			polling.countDown();
			held.close();
			for (Future<?> future : futures) {
				future.get(1, TimeUnit.MINUTES);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(acquired).hasValue(waiters);
		assertThat(this.repositoryA.maxInFlight()).isEqualTo(1);
		assertThat(this.nodeA.waiting()).isEmpty();
	}

	@Test
	void aLocalReleaseHandsAFixedLeaseToTheNextLocalWaiterWithOneUpdate() throws Exception {
		LockHandle held = this.nodeA.acquire(LockRequest.of("handoff", LONG_WAIT, LEASE));
		String owner = this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = 'handoff'", String.class);
		CountDownLatch waiting = new CountDownLatch(1);
		AtomicInteger acquiresByWaiter = new AtomicInteger(-1);
		AtomicInteger renewsByWaiter = new AtomicInteger(-1);
		AtomicReference<Long> token = new AtomicReference<>();
		Thread waiter = new Thread(() -> {
			int acquires = this.repositoryA.acquireCalls() + this.repositoryA.releaseCalls();
			int renews = this.repositoryA.renewCalls();
			waiting.countDown();
			try (LockHandle lock = this.nodeA.acquire(LockRequest.of("handoff", LONG_WAIT, Duration.ofMinutes(2)))) {
				acquiresByWaiter.set(this.repositoryA.acquireCalls() + this.repositoryA.releaseCalls() - acquires);
				renewsByWaiter.set(this.repositoryA.renewCalls() - renews);
				token.set(lock.fencingToken());
				// the row is the first holder's, extended to the waiter's lease of two minutes
				assertThat(this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = 'handoff'", String.class))
					.isEqualTo(owner);
				assertThat(lock.expiresAt()).isAfter(held.expiresAt().plus(Duration.ofSeconds(60)));
			}
		});
		waiter.start();
		waiting.await();
		await().atMost(Duration.ofSeconds(10)).until(() -> waiter.getState() == Thread.State.TIMED_WAITING);
		held.close();
		waiter.join();
		assertThat(acquiresByWaiter).hasValue(0);
		assertThat(renewsByWaiter).hasValue(1);
		assertThat(token.get()).isGreaterThan(held.fencingToken());
		awaitNoRow("handoff");
	}

	@Test
	void anInterruptEndsTheWaitAndStaysSet() throws Exception {
		try (LockHandle held = this.nodeA.acquire(LockRequest.of("interrupted", LONG_WAIT, LEASE))) {
			AtomicReference<Throwable> thrown = new AtomicReference<>();
			AtomicReference<Boolean> flag = new AtomicReference<>();
			Thread waiter = new Thread(() -> {
				try {
					this.nodeB.acquire(LockRequest.of("interrupted", LONG_WAIT, LEASE));
				}
				catch (Throwable ex) {
					thrown.set(ex);
					flag.set(Thread.currentThread().isInterrupted());
				}
			});
			waiter.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> this.repositoryB.acquireCalls() >= 1);
			waiter.interrupt();
			waiter.join();
			assertThat(thrown.get()).isInstanceOf(DbLockException.class)
				.hasCauseInstanceOf(InterruptedException.class);
			assertThat(flag.get()).isTrue();
		}
		// the interrupted waiter left nothing behind: the key is free once the holder's release is done
		this.nodeB.acquire(LockRequest.of("interrupted", LONG_WAIT, LEASE)).close();
	}

	@Test
	void closingTheHandleOfALeaseTakenOverLeavesTheNewHolder() {
		LockHandle old = this.nodeA.acquire(LockRequest.of("expired", LONG_WAIT, Duration.ofMillis(100)));
		try (LockHandle current = this.nodeB.acquire(LockRequest.of("expired", LONG_WAIT, LEASE))) {
			assertThat(current.fencingToken()).isGreaterThan(old.fencingToken());
			old.close();
			// past its time, the lease was released before close() returned, and found lost
			assertThat(old.lostSince()).isPresent();
			assertThat(rows("expired")).isEqualTo(1);
			assertThat(this.nodeA.tryAcquire(LockRequest.of("expired", Duration.ZERO, LEASE))).isEmpty();
		}
		awaitNoRow("expired");
	}

	@Test
	void aKeyJustReleasedIsFreeAtOnceForTheNode() {
		int refused = 0;
		for (int i = 0; i < 100; i++) {
			// renewed and fixed leases in turn: taken over as they are, or extended
			LockRequest request = new LockRequest("free-at-once", Duration.ZERO, LEASE, i % 2 == 0, Duration.ZERO);
			this.nodeA.acquire(request).close();
			java.util.Optional<LockHandle> again = this.nodeA.tryAcquire(request);
			if (again.isEmpty()) {
				refused++;
			}
			again.ifPresent(LockHandle::close);
		}
		assertThat(refused).isZero();
		awaitNoRow("free-at-once");
	}

	@Test
	void everyLeaseReleasedByManyThreadsEndsOnce() throws Exception {
		int threads = 8;
		int keysPerThread = 40;
		Concurrently.run(threads, (thread) -> {
			for (int i = 0; i < keysPerThread; i++) {
				this.nodeA.acquire(LockRequest.of("many-" + thread + "-" + i, LONG_WAIT, LEASE)).close();
			}
		});
		this.nodeA.close();
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key LIKE 'many-%'", Integer.class))
			.isZero();
		assertThat(this.repositoryA.leasesReleased()).isEqualTo(threads * keysPerThread);
		// each statement ends one lease or more
		assertThat(this.repositoryA.releaseCalls()).isBetween(1, threads * keysPerThread);
	}

	@Test
	void closingTheEngineRefusesNewAcquisitions() {
		LockEngine node = new LockEngine(this.repositoryA, LockEngineSettings.of(BACKOFF));
		for (int i = 0; i < 50; i++) {
			node.acquire(LockRequest.of("closing-" + i, LONG_WAIT, LEASE)).close();
		}
		node.close();
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key LIKE 'closing-%'", Integer.class))
			.isZero();
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> node.acquire(LockRequest.of("closing-0", LONG_WAIT, LEASE)))
			.withMessageContaining("shut down");
		assertThat(this.repositoryA.acquireCalls()).isEqualTo(50);
	}

	@Test
	void shutdownRefusesWaitersAtOnceAndDeletesTheRowsOfLocksStillHeld() throws Exception {
		LockEngine node = new LockEngine(this.repositoryA, LockEngineSettings.of(BACKOFF));
		LockHandle held = node.acquire(renewed("shutdown-held", LEASE));
		try (LockHandle elsewhere = this.nodeB.acquire(renewed("shutdown-elsewhere", LEASE))) {
			// one waits on the local gate, one asks the database for a key another node holds
			CompletableFuture<Throwable> atTheGate = failureOf(() -> node.acquire(renewed("shutdown-held", LEASE)));
			int callsBefore = this.repositoryA.acquireCalls();
			CompletableFuture<Throwable> polling = failureOf(() -> node.acquire(renewed("shutdown-elsewhere", LEASE)));
			await().atMost(Duration.ofSeconds(30)).until(() -> this.repositoryA.acquireCalls() >= callsBefore + 2);
			node.shutdown(Duration.ZERO);
			// within the test's patience, far less than their minute of wait
			assertThat(atTheGate.get(30, TimeUnit.SECONDS)).isInstanceOf(DbLockException.class)
				.hasMessageContaining("shut down");
			assertThat(polling.get(30, TimeUnit.SECONDS)).isInstanceOf(DbLockException.class)
				.hasMessageContaining("shut down");
			assertThat(elsewhere.isHeld()).isTrue();
		}
		assertThat(held.isHeld()).isFalse();
		assertThat(held.lostSince()).isPresent();
		assertThat(rows("shutdown-held")).isZero();
		held.close();
	}

	@Test
	void shutdownLetsAHolderFinishWithinItsGracePeriod() throws Exception {
		LockEngine node = new LockEngine(this.repositoryA, LockEngineSettings.of(BACKOFF));
		LockHandle held = node.acquire(renewed("graceful", LEASE));
		CompletableFuture<Void> shutdown = CompletableFuture.runAsync(() -> node.shutdown(Duration.ofMinutes(2)),
				LockEngineContractTests::newThread);
		await().atMost(Duration.ofSeconds(30)).until(() -> failureOf(() -> node.tryAcquire(renewed("other", LEASE)))
			.get() instanceof DbLockException);
		assertThat(shutdown).isNotDone();
		assertThat(held.isHeld()).isTrue();
		held.close();
		shutdown.get(30, TimeUnit.SECONDS);
		assertThat(held.lostSince()).isEmpty();
		assertThat(rows("graceful")).isZero();
	}

	@Test
	void manyLeasesAreRenewedTogetherAndStayHeldPastTheirLease() {
		Duration lease = Duration.ofMillis(1500);
		List<LockHandle> handles = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			handles.add(this.nodeA.acquire(renewed("renewed-together-" + i, lease)));
		}
		// five rounds of 20: more than two leases' time
		await().atMost(Duration.ofSeconds(60)).until(() -> this.repositoryA.leasesRenewed() >= 100);
		assertThat(handles).allMatch(LockHandle::isHeld);
		assertThat(this.repositoryA.renewCalls()).isLessThanOrEqualTo(this.repositoryA.leasesRenewed() / 5);
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
				+ " WHERE lock_key LIKE 'renewed-together-%' AND expires_at > " + database().dialect(this.dataSource).now(),
				Integer.class)).isEqualTo(20);
		handles.forEach(LockHandle::close);
	}

	@Test
	void aRowLockedByAnotherSessionDelaysNoOtherRenewalAndItsLeaseIsReportedLost() throws Exception {
		// embedded H2 waits for a row lock up to its LOCK_TIMEOUT whatever the statement's time limit
		assumeThat(database()).isNotIn(TestDatabase.H2, TestDatabase.H2_MYSQL_MODE, TestDatabase.H2_POSTGRESQL_MODE);
		Duration lease = Duration.ofSeconds(6);
		CountingLockRepository repository = new CountingLockRepository(
				new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource), Duration.ofSeconds(1)));
		try (LockEngine node = new LockEngine(repository, LockEngineSettings.of(BACKOFF));
				Connection foreign = this.dataSource.getConnection()) {
			LockHandle blocked = node.acquire(renewed("row-locked", lease));
			LockHandle free = node.acquire(renewed("row-free", lease));
			foreign.setAutoCommit(false);
			try (Statement statement = foreign.createStatement()) {
				statement.executeQuery("SELECT * FROM " + TestDatabase.TABLE + " WHERE lock_key = 'row-locked' FOR UPDATE")
					.close();
				await().atMost(Duration.ofSeconds(60)).until(() -> blocked.lostSince().isPresent());
				assertThat(blocked.isHeld()).isFalse();
				// the other lease went on being renewed: held past two of its leases
				Instant freeEnd = free.expiresAt();
				await().atMost(Duration.ofSeconds(60))
					.until(() -> free.expiresAt().isAfter(freeEnd.plus(lease)) && free.isHeld());
				assertThat(free.lostSince()).isEmpty();
			}
			finally {
				foreign.rollback();
				free.close();
				blocked.close();
			}
		}
	}

	private static LockRequest renewed(String key, Duration lease) {
		return new LockRequest(key, LONG_WAIT, lease, true, Duration.ZERO);
	}

	/** Runs {@code action} on a new thread of its own: what it threw, or {@code null}. */
	private static CompletableFuture<Throwable> failureOf(Runnable action) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				action.run();
				return null;
			}
			catch (RuntimeException ex) {
				return ex;
			}
		}, LockEngineContractTests::newThread);
	}

	/** An executor that starts a thread per task: the common pool may have one thread only. */
	private static void newThread(Runnable task) {
		Thread thread = new Thread(task, "test-task");
		thread.setDaemon(true);
		thread.start();
	}

	@Test
	void aReleaseIsVisibleToAnotherNodeWhenCloseReturns() {
		int refused = 0;
		for (int i = 0; i < 100; i++) {
			LockRequest request = new LockRequest("visible", Duration.ZERO, LEASE, i % 2 == 0, Duration.ZERO);
			LockEngine first = (i % 2 == 0) ? this.nodeA : this.nodeB;
			LockEngine second = (i % 2 == 0) ? this.nodeB : this.nodeA;
			first.acquire(request).close();
			java.util.Optional<LockHandle> other = second.tryAcquire(request);
			if (other.isEmpty()) {
				refused++;
			}
			other.ifPresent(LockHandle::close);
		}
		assertThat(refused).isZero();
		assertThat(rows("visible")).isZero();
	}

	@Test
	void aReEntryIntoAnExpiredLeaseIsAFreshAcquisitionAndTheStaleHandleStaysLost() {
		LockHandle outer = this.nodeA.acquire(LockRequest.of("stale", LONG_WAIT, Duration.ofMillis(300)));
		int callsWhileHeld = this.repositoryA.acquireCalls();
		await().atMost(Duration.ofSeconds(10)).until(() -> !outer.isHeld());
		// found without I/O
		assertThat(this.repositoryA.acquireCalls()).isEqualTo(callsWhileHeld);
		assertThat(outer.lostSince()).isPresent();
		try (LockHandle inner = this.nodeA.acquire(LockRequest.of("stale", LONG_WAIT, LEASE))) {
			assertThat(this.repositoryA.acquireCalls()).isGreaterThan(callsWhileHeld);
			assertThat(inner.fencingToken()).isGreaterThan(outer.fencingToken());
			assertThat(inner.isHeld()).isTrue();
			assertThat(outer.isHeld()).isFalse();
			outer.close();
			// closing the stale handle left the new lease alone
			assertThat(inner.isHeld()).isTrue();
			assertThat(this.nodeB.tryAcquire(LockRequest.of("stale", Duration.ZERO, LEASE))).isEmpty();
		}
		assertThat(rows("stale")).isZero();
		this.nodeB.acquire(LockRequest.of("stale", Duration.ZERO, LEASE)).close();
	}

	@Test
	void aReEntryAfterAnotherNodeTookAnExpiredLeaseWaitsForItAndGetsALargerToken() {
		LockHandle outer = this.nodeA.acquire(LockRequest.of("taken", LONG_WAIT, Duration.ofMillis(300)));
		await().atMost(Duration.ofSeconds(10)).until(() -> !outer.isHeld());
		LockHandle other = this.nodeB.acquire(LockRequest.of("taken", LONG_WAIT, LEASE));
		assertThat(other.fencingToken()).isGreaterThan(outer.fencingToken());
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.nodeA.acquire(LockRequest.of("taken", Duration.ofMillis(200), LEASE)));
		other.close();
		try (LockHandle again = this.nodeA.acquire(LockRequest.of("taken", LONG_WAIT, LEASE))) {
			assertThat(again.fencingToken()).isGreaterThan(other.fencingToken());
		}
		outer.close();
		assertThat(rows("taken")).isZero();
	}

	@Test
	void aReEntryAskingForARenewedLeaseInsideAFixedOneIsRefused() {
		try (LockHandle outer = this.nodeA.acquire(LockRequest.of("fixed", LONG_WAIT, Duration.ofSeconds(20)))) {
			assertThatExceptionOfType(DbLockException.class)
				.isThrownBy(() -> this.nodeA
					.acquire(new LockRequest("fixed", LONG_WAIT, LEASE, true, Duration.ZERO)))
				.withMessageContaining("fixed lease");
			assertThat(outer.isHeld()).isTrue();
		}
		assertThat(rows("fixed")).isZero();
	}

	@Test
	void aReEntryAskingForALongerFixedLeaseExtendsIt() {
		try (LockHandle outer = this.nodeA.acquire(LockRequest.of("longer", LONG_WAIT, Duration.ofSeconds(2)))) {
			java.time.Instant before = outer.expiresAt();
			try (LockHandle inner = this.nodeA.acquire(LockRequest.of("longer", LONG_WAIT, Duration.ofSeconds(20)))) {
				assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
				assertThat(inner.expiresAt()).isAfter(before.plusSeconds(10));
				assertThat(this.repositoryA.renewCalls()).isEqualTo(1);
			}
		}
	}

	@Test
	void aFixedLeaseTakenOverByAnotherNodeIsNotHeldWithoutWaitingForIo() {
		LockHandle handle = this.nodeA.acquire(LockRequest.of("short", LONG_WAIT, Duration.ofMillis(200)));
		try (LockHandle other = this.nodeB.acquire(LockRequest.of("short", LONG_WAIT, LEASE))) {
			assertThat(handle.isHeld()).isFalse();
			assertThat(handle.lostSince()).isPresent();
			assertThat(other.isHeld()).isTrue();
		}
		handle.close();
	}

	@Test
	void aHandleClosedByAnotherThreadLeavesNothingInTheAcquiringThreadsContext() throws Exception {
		LockHandle handle = this.nodeA.acquire(LockRequest.of("context", LONG_WAIT, LEASE));
		assertThat(HeldLocks.innermost()).contains(handle);
		Thread closer = new Thread(handle::close);
		closer.start();
		closer.join(TimeUnit.MINUTES.toMillis(1));
		assertThat(HeldLocks.innermost()).isEmpty();
		assertThat(rows("context")).isZero();
	}

	@Test
	void insideATransactionTheLockIsReleasedWhenTheTransactionCompletes() {
		org.springframework.transaction.support.TransactionTemplate transactions = new org.springframework.transaction.support.TransactionTemplate(
				new org.springframework.jdbc.datasource.DataSourceTransactionManager(this.dataSource));
		for (boolean rollback : new boolean[] { false, true }) {
			transactions.executeWithoutResult((status) -> {
				this.nodeA.acquire(LockRequest.of("in-tx", LONG_WAIT, LEASE)).close();
				// released with the transaction: still taken for every node
				assertThat(rows("in-tx")).isEqualTo(1);
				assertThat(this.nodeB.tryAcquire(LockRequest.of("in-tx", Duration.ZERO, LEASE))).isEmpty();
				// its own thread may take it again meanwhile
				this.nodeA.acquire(LockRequest.of("in-tx", Duration.ZERO, LEASE)).close();
				if (rollback) {
					status.setRollbackOnly();
				}
			});
			assertThat(rows("in-tx")).isZero();
			this.nodeB.acquire(LockRequest.of("in-tx", Duration.ZERO, LEASE)).close();
		}
	}

	@Test
	void twoNodesShareAHotKeyInTurns() throws Exception {
		HotKey run = hotKeyInTurns(this.repositoryA, this.repositoryB);
		assertThat(run.overlaps()).hasValue(0);
		assertThat(run.timeouts()).hasValue(0);
		assertThat(run.acquired()[0].get()).as("node A's share of " + run.total()).isGreaterThanOrEqualTo(run.total() * 3 / 10);
		assertThat(run.acquired()[1].get()).as("node B's share of " + run.total()).isGreaterThanOrEqualTo(run.total() * 3 / 10);
	}

	@Test
	void aCedeWhoseReplyIsLostEndsTheLeaseForItsNodeAndNoLocalThreadTakesItOn() throws Exception {
		HotKey run = hotKeyInTurns(this.repositoryA.loseCededReplies(), this.repositoryB.loseCededReplies());
		int lost = this.repositoryA.lostCedeReplies() + this.repositoryB.lostCedeReplies();
		System.out.println(database() + " hot key, every committed cede's reply lost: " + lost + " lost replies, "
				+ run.overlaps() + " overlapping holds");
		assertThat(lost).as("cedes whose reply was lost").isPositive();
		assertThat(run.overlaps()).hasValue(0);
		assertThat(run.timeouts()).hasValue(0);
	}

	/**
	 * After a cede, the next local thread holds back; one whose wait ends within the hold-back
	 * does not ask the database (the key is free, and the other node's next attempt has not
	 * come yet), and the thread after it holds back for the rest: the other node gets the key.
	 */
	@Test
	void aThreadWhoseWaitEndsInTheHoldBackDoesNotTakeBackTheCededKeyNorDoesTheNextOne() throws Exception {
		HoldBackScenario.run(this.repositoryA, this.repositoryB, (wait) -> LockRequest.of("ceded", wait, LEASE),
				() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
						+ " WHERE lock_key = 'ceded' AND wanted_at IS NOT NULL", Integer.class) == 1);
	}

	/** The outcome of two nodes of 4 threads each taking one hot key for 3 s. */
	private record HotKey(AtomicInteger[] acquired, AtomicInteger timeouts, AtomicInteger overlaps) {

		int total() {
			return this.acquired[0].get() + this.acquired[1].get();
		}

	}

	/**
	 * Two nodes, each of 4 threads, on one hot key for 3 s (local turns of 50 ms), each hold
	 * 1 ms; counts the holds of each node, the timeouts, and the holds that began while
	 * another was inside.
	 */
	private HotKey hotKeyInTurns(CountingLockRepository repositoryA, CountingLockRepository repositoryB)
			throws Exception {
		LockEngine nodeA = new LockEngine(repositoryA, LockEngineSettings.of(BACKOFF).withLocalTurn(Duration.ofMillis(50)));
		LockEngine nodeB = new LockEngine(repositoryB, LockEngineSettings.of(BACKOFF).withLocalTurn(Duration.ofMillis(50)));
		int threadsPerNode = 4;
		long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		HotKey run = new HotKey(new AtomicInteger[] { new AtomicInteger(), new AtomicInteger() }, new AtomicInteger(),
				new AtomicInteger());
		AtomicInteger inside = new AtomicInteger();
		try {
			Concurrently.run(2 * threadsPerNode, (thread) -> {
				LockEngine node = (thread % 2 == 0) ? nodeA : nodeB;
				while (System.nanoTime() - end < 0) {
					try (LockHandle lock = node.acquire(new LockRequest("hot", Duration.ofSeconds(5), LEASE, true, Duration.ZERO))) {
						if (inside.incrementAndGet() > 1) {
							run.overlaps().incrementAndGet();
						}
						java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
						inside.decrementAndGet();
						run.acquired()[thread % 2].incrementAndGet();
					}
					catch (LockAcquisitionException ex) {
						run.timeouts().incrementAndGet();
					}
				}
			});
		}
		finally {
			nodeA.close();
			nodeB.close();
		}
		System.out.println(database() + " hot key, 2 engines x " + threadsPerNode + " threads, 3 s: node A "
				+ run.acquired()[0] + ", node B " + run.acquired()[1] + ", timeouts " + run.timeouts() + ", overlaps "
				+ run.overlaps());
		return run;
	}

	@Test
	void aRenewedLeasePassedAmongLocalThreadsIsRenewedOnTimeAndNeverLost() throws Exception {
		Duration lease = Duration.ofSeconds(2);
		AtomicInteger lost = new AtomicInteger();
		AtomicInteger notHeld = new AtomicInteger();
		AtomicInteger holds = new AtomicInteger();
		this.nodeA.addListener(new LockListener() {
			@Override
			public void lost(String key, DbLockMode mode) {
				lost.incrementAndGet();
			}
		});
		// four lease periods and a half: a schedule reset by every hand-on loses the lease once per period
		long end = System.nanoTime() + lease.multipliedBy(9).dividedBy(2).toNanos();
		Concurrently.run(8, (thread) -> {
			while (System.nanoTime() - end < 0) {
				try (LockHandle lock = this.nodeA.acquire(new LockRequest("busy", LONG_WAIT, lease, true, Duration.ZERO))) {
					java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
					if (!lock.isHeld()) {
						notHeld.incrementAndGet();
					}
					holds.incrementAndGet();
				}
			}
		});
		System.out.println(database() + " one key among 8 local threads, renewed lease of " + lease + ", 9 s: " + holds
				+ " holds, " + this.repositoryA.acquireCalls() + " acquisitions, " + this.repositoryA.renewCalls()
				+ " renewals, " + lost + " lost, " + notHeld + " holds not held");
		assertThat(lost).hasValue(0);
		assertThat(notHeld).hasValue(0);
		assertThat(this.repositoryA.renewCalls()).as("renewals sent").isPositive();
	}

	@Test
	void aFailedRenewalIsTriedAgainAtTheNextSweepNotAWholeIntervalLater() {
		java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger(1);
		io.github.dblock.jdbc.LockRepository failingOnce = new io.github.dblock.jdbc.LockRepository() {
			@Override
			public java.util.Optional<io.github.dblock.jdbc.Lease> tryAcquire(String key, String owner, Duration lease) {
				return LockEngineContractTests.this.jdbcRepository.tryAcquire(key, owner, lease);
			}

			@Override
			public boolean cede(io.github.dblock.jdbc.Lease lease, Duration wantedWithin) {
				return LockEngineContractTests.this.jdbcRepository.cede(lease, wantedWithin);
			}

			@Override
			public boolean release(io.github.dblock.jdbc.Lease lease, Duration minimumHold) {
				return LockEngineContractTests.this.jdbcRepository.release(lease, minimumHold);
			}

			@Override
			public java.util.Optional<java.time.Instant> renew(io.github.dblock.jdbc.Lease lease, Duration duration) {
				if (failures.getAndDecrement() > 0) {
					throw new org.springframework.dao.DataAccessResourceFailureException("connection reset");
				}
				return LockEngineContractTests.this.jdbcRepository.renew(lease, duration);
			}

			@Override
			public int deleteExpired(int limit) {
				return LockEngineContractTests.this.jdbcRepository.deleteExpired(limit);
			}

			@Override
			public int maxKeyLength() {
				return LockEngineContractTests.this.jdbcRepository.maxKeyLength();
			}
		};
		// renewed at 1.6 s of a 3 s lease: a retry only at the next interval (3.2 s) would come after its end
		LockEngine node = new LockEngine(failingOnce,
				LockEngineSettings.of(BACKOFF).withRenewInterval(Duration.ofMillis(1600)));
		try (LockHandle handle = node.acquire(new LockRequest("flaky", LONG_WAIT, Duration.ofSeconds(3), true,
				Duration.ZERO))) {
			await().atMost(Duration.ofSeconds(10)).until(() -> failures.get() < 0);
			long renewedAt = System.nanoTime();
			// past the end the lease would have had without the retry
			await().atMost(Duration.ofSeconds(10))
				.until(() -> System.nanoTime() - renewedAt >= Duration.ofMillis(2000).toNanos());
			assertThat(handle.isHeld()).isTrue();
			assertThat(this.nodeB.tryAcquire(LockRequest.of("flaky", Duration.ZERO, LEASE))).isEmpty();
		}
		finally {
			node.close();
		}
	}

	@Test
	void badArgumentsAreRejectedWithoutSql() {
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(LockRequest.of(" ", LONG_WAIT, LEASE)))
			.withMessageContaining("blank");
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(LockRequest.of("k".repeat(256), LONG_WAIT, LEASE)))
			.withMessageContaining("256 characters");
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(LockRequest.of("k", Duration.ofMillis(-1), LEASE)))
			.withMessageContaining("negative");
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquire(LockRequest.of("k", LONG_WAIT, Duration.ZERO)))
			.withMessageContaining("positive");
		assertThat(this.repositoryA.acquireCalls()).isZero();
	}

	/**
	 * A release whose delete fails is reported to its caller, never only logged: the
	 * handle's {@code close()} throws, naming the instant until which the key stays taken
	 * (another node indeed finds it taken); the template's {@code execute} and a
	 * {@code @DbLock} method throw it with the action's result, or add it to the action's
	 * own exception.
	 */
	/**
	 * A stalled database both ends a lease and fails its release: the caller hears of the
	 * loss (its policy), with the release's failure beside it, never the release alone.
	 */
	@Test
	void aLeaseLostWhoseReleaseFailsIsReportedAsLost() {
		DbLockTemplate template = new DbLockTemplate(this.nodeA, "", Duration.ZERO, LEASE);
		int reportedAsReleaseOnly = 0;
		int rounds = 3;
		for (int i = 0; i < rounds; i++) {
			String key = "lost-and-unreleased-" + i;
			try {
				template.execute(key, Duration.ZERO, Duration.ofMillis(300), () -> {
					LockHandle held = DbLockContext.current().orElseThrow();
					// the fixed lease runs out on the local clock while the work goes on
					await().atMost(Duration.ofSeconds(30)).until(() -> !held.isHeld());
					this.repositoryA.failReleases();
					return "late";
				});
			}
			catch (io.github.dblock.LockLostException ex) {
				assertThat(ex.getSuppressed()).hasSize(1);
				assertThat(ex.getSuppressed()[0]).isInstanceOf(LockReleaseException.class);
			}
			catch (LockReleaseException ex) {
				reportedAsReleaseOnly++;
			}
			finally {
				this.repositoryA.healReleases();
			}
		}
		System.out.println(database() + ": leases lost whose release failed, reported as a release failure alone: "
				+ reportedAsReleaseOnly + " of " + rounds);
		assertThat(reportedAsReleaseOnly).isZero();
	}

	@Test
	void aReleaseThatFailsIsReportedToItsCaller() {
		int rounds = 10;
		int silentCloses = 0;
		int closesWithoutItsEnd = 0;
		int silentExecutes = 0;
		int resultsLost = 0;
		int actionFailuresLost = 0;
		DbLockTemplate template = new DbLockTemplate(this.nodeA, "", Duration.ZERO, LEASE);
		ProxyFactory proxies = new ProxyFactory(new AnnotatedWork());
		proxies.setProxyTargetClass(true);
		proxies.addAdvisor(new DbLockAdvisor(() -> template, new DefaultListableBeanFactory(), 0));
		AnnotatedWork annotated = (AnnotatedWork) proxies.getProxy();
		this.repositoryA.failReleases();
		for (int i = 0; i < rounds; i++) {
			String key = "release-fails-" + i;
			LockHandle handle = this.nodeA.acquire(new LockRequest(key, Duration.ZERO, LEASE, false, Duration.ZERO));
			Instant end = handle.expiresAt();
			try {
				handle.close();
				silentCloses++;
			}
			catch (DbLockException ex) {
				if (!ex.getMessage().contains(end.toString())) {
					closesWithoutItsEnd++;
				}
			}
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeB.acquire(new LockRequest(key, Duration.ZERO, LEASE, false, Duration.ZERO)));
			try {
				template.execute(key + "-execute", Duration.ZERO, LEASE, () -> "done");
				silentExecutes++;
			}
			catch (DbLockException ex) {
				if (!(ex instanceof LockReleaseException released) || !"done".equals(released.getResult())) {
					resultsLost++;
				}
			}
			IllegalStateException failure = new IllegalStateException("the action failed");
			try {
				template.execute(key + "-failing", Duration.ZERO, LEASE, () -> {
					throw failure;
				});
			}
			catch (RuntimeException ex) {
				if (ex != failure || ex.getSuppressed().length != 1
						|| !(ex.getSuppressed()[0] instanceof LockReleaseException)) {
					actionFailuresLost++;
				}
			}
			try {
				annotated.work(key);
				silentExecutes++;
			}
			catch (DbLockException ex) {
				if (!(ex instanceof LockReleaseException released) || !"worked".equals(released.getResult())) {
					resultsLost++;
				}
			}
			try {
				annotated.fail(key);
			}
			catch (RuntimeException ex) {
				if (!"the method failed".equals(ex.getMessage()) || ex.getSuppressed().length != 1
						|| !(ex.getSuppressed()[0] instanceof LockReleaseException)) {
					actionFailuresLost++;
				}
			}
		}
		this.repositoryA.healReleases();
		System.out.println(database() + " " + rounds + " rounds of releases that fail (" + this.repositoryA.failedReleases()
				+ " failed): " + silentCloses + " closes returned normally, " + closesWithoutItsEnd
				+ " reports without the lease's end, " + silentExecutes + " executes and @DbLock calls returned normally, "
				+ resultsLost + " results lost, " + actionFailuresLost + " action failures without the release's");
		assertThat(silentCloses).isZero();
		assertThat(closesWithoutItsEnd).isZero();
		assertThat(silentExecutes).isZero();
		assertThat(resultsLost).isZero();
		assertThat(actionFailuresLost).isZero();
	}

	/**
	 * An attempt whose statement the client gave up on (it stalled past the statement
	 * timeout, here in a test-only trigger that stalls a key's first insert) and that commits after the first clean-up found
	 * nothing leaves no ghost: the row it writes is deleted once it lands, long before its
	 * lease would end.
	 */
	@Test
	void anOrphanedAttemptThatLandsAfterTheFirstCleanUpIsDeleted() {
		// PostgreSQL runs an abandoned statement to its end; MariaDB ends it when its client is gone
		assumeThat(database()).isEqualTo(TestDatabase.POSTGRESQL);
		int keys = 3;
		Duration lease = Duration.ofSeconds(20);
		Duration freedWithin = lease.dividedBy(2);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_landed (lock_key VARCHAR(255))");
		this.jdbc.update("DELETE FROM db_lock_test_landed");
		this.jdbc.execute("CREATE OR REPLACE FUNCTION db_lock_test_stall() RETURNS trigger AS $$ BEGIN "
				+ "IF NEW.lock_key LIKE 'stalled-%' AND NOT EXISTS (SELECT 1 FROM db_lock_test_landed l "
				+ "WHERE l.lock_key = NEW.lock_key) THEN PERFORM pg_sleep(3); "
				+ "INSERT INTO db_lock_test_landed VALUES (NEW.lock_key); END IF; RETURN NEW; END $$ LANGUAGE plpgsql");
		this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall ON db_lock");
		this.jdbc.execute("CREATE TRIGGER db_lock_test_stall BEFORE INSERT ON db_lock FOR EACH ROW "
				+ "EXECUTE FUNCTION db_lock_test_stall()");
		// the cancel of the abandoned statement does not reach the server (a partition): it runs on
		JdbcLockRepository impatient = new JdbcLockRepository(this.dataSource,
				CancelNotSent.postgreSql(this.jdbcRepository.dialect().table()), Duration.ofMillis(500));
		int ghosts = 0;
		int landed;
		long freedAfterMillis = 0;
		try (LockEngine stalled = new LockEngine(new CountingLockRepository(impatient), LockEngineSettings.of(BACKOFF))) {
			for (int i = 0; i < keys; i++) {
				LockRequest request = new LockRequest("stalled-" + i, Duration.ZERO, lease, false, Duration.ZERO);
				assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> stalled.acquire(request));
			}
			// every orphaned statement ran to its end in the server and committed
			await().atMost(Duration.ofSeconds(30)).until(() -> this.jdbc.queryForObject(
					"SELECT COUNT(*) FROM db_lock_test_landed", Integer.class) == keys);
			landed = this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_test_landed", Integer.class);
			long since = System.nanoTime();
			for (int i = 0; i < keys; i++) {
				LockRequest request = new LockRequest("stalled-" + i, Duration.ofMillis(200), lease, false, Duration.ZERO);
				LockHandle handle = null;
				while (handle == null && System.nanoTime() - since < freedWithin.toNanos()) {
					try {
						handle = this.nodeB.acquire(request);
					}
					catch (LockAcquisitionException ex) {
						// asked again after the wait of 200 ms
					}
				}
				if (handle == null) {
					ghosts++;
				}
				else {
					freedAfterMillis = Math.max(freedAfterMillis, (System.nanoTime() - since) / 1_000_000);
					handle.close();
				}
			}
		}
		finally {
			this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall ON db_lock");
		}
		System.out.println(database() + " " + keys + " attempts stalled past a 500 ms statement timeout: " + landed
				+ " landed after the first clean-up, " + ghosts + " keys still blocked by a ghost " + freedWithin
				+ " later (lease " + lease + "); the others free " + freedAfterMillis + " ms after the last landed");
		assertThat(ghosts).isZero();
	}

	/**
	 * An orphaned attempt that waited in the server past its clean-up's horizon (on
	 * PostgreSQL, for the key's advisory lock, held here by an open transaction of the
	 * test's that acquired the key) lands with the lease it asked for counted from when the
	 * server received it: already expired, it blocks no one.
	 */
	@Test
	void anOrphanThatLandsAfterItsHorizonIsAlreadyExpired() throws Exception {
		assumeThat(database()).isEqualTo(TestDatabase.POSTGRESQL);
		Duration lease = Duration.ofSeconds(4);
		// the cancel of the abandoned statement does not reach the server (a partition): it runs on
		JdbcLockRepository impatient = new JdbcLockRepository(this.dataSource,
				CancelNotSent.postgreSql(this.jdbcRepository.dialect().table()), Duration.ofMillis(500));
		String landedOwner;
		long blockedMillis = -1;
		try (Connection holding = this.dataSource.getConnection()) {
			holding.setAutoCommit(false);
			JdbcTemplate inTransaction = new JdbcTemplate(
					new org.springframework.jdbc.datasource.SingleConnectionDataSource(holding, true));
			// the key's advisory lock (and its row), held by a transaction left open
			assertThat(this.jdbcRepository.dialect().tryAcquire(inTransaction, "late", "test-holder", lease)).isPresent();
			try (LockEngine stalled = new LockEngine(new CountingLockRepository(impatient), LockEngineSettings.of(BACKOFF))) {
				LockRequest request = new LockRequest("late", Duration.ZERO, lease, false, Duration.ZERO);
				assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> stalled.acquire(request));
				// past the orphan's horizon: its failure plus the lease it asked for
				LockSupport.parkNanos(lease.plusSeconds(2).toNanos());
				holding.rollback();
				// the orphaned statement now runs to its end in the server and commits
				await().atMost(Duration.ofSeconds(30)).until(() -> !this.jdbc
					.queryForList("SELECT owner FROM db_lock WHERE lock_key = 'late'", String.class)
					.isEmpty());
				landedOwner = this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = 'late'", String.class);
				long since = System.nanoTime();
				LockRequest again = new LockRequest("late", Duration.ofMillis(200), lease, false, Duration.ZERO);
				while (System.nanoTime() - since < lease.dividedBy(2).toNanos()) {
					try (LockHandle handle = this.nodeB.acquire(again)) {
						blockedMillis = (System.nanoTime() - since) / 1_000_000;
						break;
					}
					catch (LockAcquisitionException ex) {
						// asked again after the wait of 200 ms
					}
				}
			}
		}
		System.out.println(database() + ": an orphan (" + landedOwner + ") landed past its horizon; the key was "
				+ ((blockedMillis < 0) ? "still blocked " + lease.dividedBy(2).toMillis() + " ms later (lease " + lease.toMillis() + " ms)" : "free after " + blockedMillis + " ms"));
		assertThat(blockedMillis).isNotNegative();
	}

	/**
	 * Orphans are deleted in batches, and again after a delete found nothing: an attempt's
	 * statement that lands after its first clean-up (here sent by the test once that has
	 * run) is deleted long before its lease would end, on every database.
	 */
	@Test
	void orphansAreDeletedInBatchesAndAgainUntilTheirAttemptsCanNoLongerLand() throws Exception {
		int count = 250;
		Duration lease = Duration.ofSeconds(10);
		AtomicInteger statements = new AtomicInteger();
		AtomicInteger largest = new AtomicInteger();
		CountDownLatch firstDeleteOf7 = new CountDownLatch(1);
		long landedAt;
		long deletedAfterMillis;
		int ghosts = 0;
		try (Orphans orphans = new Orphans("rows", (keysByOwner) -> {
			statements.incrementAndGet();
			largest.accumulateAndGet(keysByOwner.size(), Math::max);
			int deleted = this.jdbcRepository.abandonAll(keysByOwner);
			if (keysByOwner.containsKey("orphan-owner-7")) {
				firstDeleteOf7.countDown();
			}
			return deleted;
		}, new LockScheduler())) {
			for (int i = 0; i < count; i++) {
				orphans.abandon("orphan-" + i, "orphan-owner-" + i, lease);
			}
			assertThat(firstDeleteOf7.await(1, TimeUnit.MINUTES)).isTrue();
			int firstRoundStatements = statements.get();
			// the statement of attempt 7 lands now, after a delete of it found nothing
			assertThat(this.jdbcRepository.tryAcquire("orphan-7", "orphan-owner-7", lease)).isPresent();
			landedAt = System.nanoTime();
			long horizon = landedAt + lease.toNanos();
			while (rows("orphan-7") > 0 && System.nanoTime() - horizon < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			deletedAfterMillis = (System.nanoTime() - landedAt) / 1_000_000;
			ghosts = rows("orphan-7");
			System.out.println(database() + " " + count + " orphans: " + firstRoundStatements + " statements until "
					+ "the first delete of one, largest batch " + largest + ", " + statements + " statements until its "
					+ "late row was deleted " + deletedAfterMillis + " ms after it landed (lease " + lease + "), " + ghosts
					+ " ghost rows left");
		}
		assertThat(largest.get()).isGreaterThan(1).isLessThanOrEqualTo(Orphans.BATCH);
		assertThat(ghosts).isZero();
	}

	/** Work under {@code @DbLock}, proxied as the auto-configuration does. */
	static class AnnotatedWork {

		@DbLock(name = "annotated", key = "#p0", waitMs = 0, leaseMs = 30_000)
		public String work(String key) {
			return "worked";
		}

		@DbLock(name = "annotated-failing", key = "#p0", waitMs = 0, leaseMs = 30_000)
		public String fail(String key) {
			throw new IllegalStateException("the method failed");
		}

	}

	/** A released key's row is deleted before the release returns. */
	private void awaitNoRow(String key) {
		assertThat(rows(key)).isZero();
	}

	private int rows(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key = ?", Integer.class, key);
	}

}
