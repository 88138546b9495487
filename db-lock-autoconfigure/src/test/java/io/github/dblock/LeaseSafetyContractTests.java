package io.github.dblock;

import io.github.dblock.support.DbLockTemplate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockScheduler;
import io.github.dblock.maintenance.LockReaper;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.testsupport.CountingLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What happens when a lease and the work it protects disagree, on a real database: two
 * engines over one table play two nodes, with a one-second default lease that node A's
 * watchdog renews every third of a second.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
abstract class LeaseSafetyContractTests {

	private static final Duration LEASE = Duration.ofSeconds(1);

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private JdbcLockRepository jdbcRepository;

	private CountingLockRepository repositoryA;

	private LockEngine engineA;

	private LockEngine engineB;

	private DbLockTemplate nodeA;

	private DbLockTemplate nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createNodes() {
		this.dataSource = database().dataSource(12);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_account (id INT PRIMARY KEY, balance BIGINT, fence BIGINT)");
		this.jdbcRepository = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
		this.repositoryA = new CountingLockRepository(this.jdbcRepository);
		Backoff backoff = new Backoff(Duration.ofMillis(2), Duration.ofMillis(20));
		this.engineA = new LockEngine(this.repositoryA, io.github.dblock.engine.LockEngineSettings.of(backoff));
		this.engineB = new LockEngine(this.jdbcRepository, io.github.dblock.engine.LockEngineSettings.of(backoff));
		this.nodeA = new DbLockTemplate(this.engineA, "", LONG_WAIT, LEASE);
		this.nodeB = new DbLockTemplate(this.engineB, "", LONG_WAIT, LEASE);
	}

	@AfterAll
	void close() {
		if (this.engineA != null) {
			this.engineA.close();
			this.engineB.close();
		}
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void reset() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		this.jdbc.update("DELETE FROM db_lock_test_account");
		this.repositoryA.reset();
	}

	@Test
	void aRenewedLeaseKeepsTheLockForThreeAndAHalfLeases() throws Exception {
		AtomicBoolean holding = new AtomicBoolean(true);
		AtomicInteger attemptsByB = new AtomicInteger();
		AtomicInteger acquiredByB = new AtomicInteger();
		Thread nodeBTrying = new Thread(() -> {
			while (holding.get()) {
				attemptsByB.incrementAndGet();
				this.nodeB.tryAcquire("long-job", null).ifPresent((handle) -> {
					acquiredByB.incrementAndGet();
					handle.close();
				});
			}
		});
		try (LockHandle handle = this.nodeA.acquire("long-job", null, null)) {
			nodeBTrying.start();
			Thread.sleep(3500); // the job: 3.5 times the lease
			assertThat(handle.isHeld()).isTrue();
			holding.set(false);
			// every attempt of B ends while A still holds the lock
			nodeBTrying.join();
		}
		assertThat(acquiredByB).hasValue(0);
		assertThat(attemptsByB.get()).isGreaterThan(10);
		assertThat(this.repositoryA.renewCalls()).isGreaterThanOrEqualTo(3);
		this.nodeB.acquire("long-job", LONG_WAIT, null).close();
	}

	@Test
	void aFixedLeaseEndsOnTimeWhileItsHolderStillRuns() {
		long start = System.nanoTime();
		LockHandle handle = this.nodeA.acquire("fixed", null, Duration.ofMillis(500));
		try (LockHandle taken = this.nodeB.acquire("fixed", LONG_WAIT, null)) {
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
			assertThat(taken.fencingToken()).isGreaterThan(handle.fencingToken());
			assertThat(this.repositoryA.renewCalls()).isZero();
			handle.close();
			assertThat(handle.lostSince()).isPresent();
			assertThat(rows("fixed")).isEqualTo(1);
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> this.nodeA.checkNotLost(handle, "done"))
				.satisfies((ex) -> assertThat(ex.getResult()).isEqualTo("done"));
		}
	}

	@Test
	void aLostLeaseIsFoundByTheWatchdogAndLoggedAndItsReleaseLeavesTheNewHolder(CapturedOutput output) {
		LockHandle handle = this.nodeA.acquire("deleted", null, null);
		this.jdbc.update("DELETE FROM db_lock WHERE lock_key = ?", "deleted");
		await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
		assertThat(handle.lostSince()).isPresent();
		assertThat(output).containsPattern("ERROR .* Lost lock 'deleted' \\(owner [^,]+, token \\d+\\) at ");
		try (LockHandle newHolder = this.nodeB.acquire("deleted", Duration.ZERO, null)) {
			handle.close();
			assertThat(owner("deleted")).isNotNull();
			assertThat(newHolder.isHeld()).isTrue();
		}
	}

	@Test
	void executeReportsALostLeasePerPolicyWithTheResult() {
		assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> this.nodeA.execute("report", this::loseCurrentLease))
			.satisfies((ex) -> assertThat(ex.getResult()).isEqualTo("result"))
			.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo("report"));
		DbLockTemplate logging = new DbLockTemplate(this.engineA, "", LONG_WAIT, LEASE, LostLeasePolicy.LOG);
		assertThat(logging.execute("report", this::loseCurrentLease)).isEqualTo("result");
	}

	private String loseCurrentLease() {
		LockHandle handle = DbLockContext.current().orElseThrow();
		this.jdbc.update("DELETE FROM db_lock WHERE lock_key = ?", handle.key());
		await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
		return "result";
	}

	@Test
	void aFencedWriteFromAPausedHolderIsRejected() throws Exception {
		this.jdbc.update("INSERT INTO db_lock_test_account (id, balance, fence) VALUES (1, 100, 0)");
		LockHandle paused = this.nodeA.acquire("account:1", null, Duration.ofMillis(300));
		// A pauses (a GC, a stalled network) past its lease; B takes over and writes
		try (LockHandle current = this.nodeB.acquire("account:1", LONG_WAIT, null)) {
			assertThat(fencedWrite(1, 50, current.fencingToken())).isEqualTo(1);
		}
		// A wakes and writes with its older token
		assertThat(fencedWrite(1, 999, paused.fencingToken())).isZero();
		paused.close();
		assertThat(this.jdbc.queryForObject("SELECT balance FROM db_lock_test_account WHERE id = 1", Long.class))
			.isEqualTo(50);
	}

	private int fencedWrite(int id, long balance, long fence) {
		return this.jdbc.update("UPDATE db_lock_test_account SET balance = ?, fence = ? WHERE id = ? AND fence < ?",
				balance, fence, id, fence);
	}

	@Test
	void theReaperDeletesOnlyExpiredRowsAndTwoReapersAtOnceAreHarmless() throws Exception {
		int expired = 400;
		// the reaper deletes the expired rows of every table: none but these
		for (String table : List.of("_rw", "_rw_intents", "_fair_queue")) {
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + table);
		}
		for (int i = 0; i < expired; i++) {
			this.jdbcRepository.tryAcquire("order-" + i, "o" + i, Duration.ofNanos(1000)).orElseThrow();
		}
		List<Lease> live = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			live.add(this.jdbcRepository.tryAcquire("live-" + i, "l" + i, Duration.ofSeconds(30)).orElseThrow());
		}
		Lease renewed = this.jdbcRepository.tryAcquire("renewed", "r", Duration.ofNanos(1000)).orElseThrow();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE expires_at <= "
					+ database().dialect(this.dataSource).now(), Integer.class) == expired + 1);
		assertThat(this.jdbcRepository.renew(renewed, Duration.ofSeconds(30))).isPresent();
		LockScheduler scheduler = new LockScheduler();
		LockReaper first = new LockReaper(this.jdbcRepository, 37, Duration.ofMinutes(1), scheduler);
		LockReaper second = new LockReaper(this.jdbcRepository, 37, Duration.ofMinutes(1), scheduler);
		try {
			CountDownLatch start = new CountDownLatch(1);
			java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
			try {
				Future<Integer> a = pool.submit(() -> {
					start.await();
					return first.reap();
				});
				Future<Integer> b = pool.submit(() -> {
					start.await();
					return second.reap();
				});
				start.countDown();
				assertThat(a.get(1, TimeUnit.MINUTES) + b.get(1, TimeUnit.MINUTES)).isEqualTo(expired);
			}
			finally {
				pool.shutdownNow();
			}
		}
		finally {
			scheduler.shutdown();
		}
		assertThat(this.jdbc.queryForList("SELECT lock_key FROM db_lock", String.class))
			.containsExactlyInAnyOrder("live-0", "live-1", "live-2", "live-3", "live-4", "renewed");
	}

	@Test
	void aMinimumHoldKeepsTheLockAfterAnEarlyReleaseUntilItPasses() {
		long start = System.nanoTime();
		LockHandle job = this.nodeA.acquire("nightly-report", Duration.ZERO, null, Duration.ofSeconds(1));
		job.close();
		assertThat(rows("nightly-report")).isEqualTo(1);
		assertThat(this.nodeB.tryAcquire("nightly-report", null)).isEmpty();
		try (LockHandle next = this.nodeB.acquire("nightly-report", LONG_WAIT, null)) {
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
		}
		assertThat(job.lostSince()).isEmpty();
	}

	@Test
	void aMinimumHoldThatHasPassedReleasesAtOnce() {
		LockHandle job = this.nodeA.acquire("short-hold", Duration.ZERO, null, Duration.ofMillis(1));
		await().pollDelay(Duration.ofMillis(5)).until(() -> true);
		job.close();
		assertThat(rows("short-hold")).isZero();
	}

	@Test
	void everyLockObtainedForOneKeyActsAsOne() {
		Lock first = this.nodeA.obtain("obtained");
		first.lock();
		assertThat(rows("obtained")).isEqualTo(1);
		Lock second = this.nodeA.obtain("obtained");
		assertThat(second).isEqualTo(first);
		// re-entered through one, released through the other: one count each
		assertThat(second.tryLock()).isTrue();
		second.unlock();
		assertThat(rows("obtained")).isEqualTo(1);
		second.unlock();
		assertThat(rows("obtained")).isZero();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(first::unlock);
	}

	@Test
	void theLockAdapterHonoursInterrupts() throws Exception {
		Lock lock = this.nodeA.obtain("jdk");
		try (LockHandle held = this.nodeB.acquire("jdk", Duration.ZERO, null)) {
			assertThat(lock.tryLock()).isFalse();
			assertThat(lock.tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
			AtomicReference<Throwable> thrown = new AtomicReference<>();
			Thread interruptible = new Thread(() -> {
				try {
					lock.lockInterruptibly();
				}
				catch (Throwable ex) {
					thrown.set(ex);
				}
			});
			interruptible.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> interruptible.getState() == Thread.State.TIMED_WAITING);
			interruptible.interrupt();
			interruptible.join();
			assertThat(thrown.get()).isInstanceOf(InterruptedException.class);

			AtomicBoolean interruptedAfterLock = new AtomicBoolean();
			Thread uninterruptible = new Thread(() -> {
				lock.lock();
				interruptedAfterLock.set(Thread.currentThread().isInterrupted());
				lock.unlock();
			});
			uninterruptible.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> uninterruptible.getState() == Thread.State.TIMED_WAITING);
			uninterruptible.interrupt();
			held.close();
			uninterruptible.join();
			assertThat(interruptedAfterLock).isTrue();
		}
		lock.lock();
		lock.lock();
		lock.unlock();
		assertThat(rows("jdk")).isEqualTo(1);
		Thread other = new Thread(() -> assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(lock::unlock));
		other.start();
		other.join();
		lock.unlock();
		await().atMost(Duration.ofSeconds(10)).until(() -> rows("jdk") == 0);
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
	}

	@Test
	void theContextShowsTheInnermostLockOfTheThread() {
		assertThat(DbLockContext.current()).isEmpty();
		try (LockHandle outer = this.nodeA.acquire("outer", null, null)) {
			assertThat(DbLockContext.current()).containsSame(outer);
			try (LockHandle inner = this.nodeA.acquire("inner", null, null)) {
				assertThat(DbLockContext.current()).containsSame(inner);
			}
			assertThat(DbLockContext.current()).containsSame(outer);
		}
		assertThat(DbLockContext.current()).isEmpty();
	}

	@Test
	void tryExecuteRunsOnlyWhenTheLockIsFree() {
		AtomicInteger runs = new AtomicInteger();
		assertThat(this.nodeA.tryExecute("try", runs::incrementAndGet)).isTrue();
		assertThat(runs).hasValue(1);
		try (LockHandle held = this.nodeB.acquire("try", LONG_WAIT, null)) {
			assertThat(this.nodeA.tryExecute("try", runs::incrementAndGet)).isFalse();
		}
		assertThat(this.nodeA.execute("try", runs::incrementAndGet)).isEqualTo(2);
		assertThat(runs).hasValue(2);
	}

	private int rows(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key = ?", Integer.class, key);
	}

	private String owner(String key) {
		return this.jdbc.queryForList("SELECT owner FROM db_lock WHERE lock_key = ?", String.class, key)
			.stream()
			.findFirst()
			.orElse(null);
	}

}
