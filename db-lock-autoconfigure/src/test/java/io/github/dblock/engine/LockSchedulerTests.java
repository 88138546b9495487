package io.github.dblock.engine;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link LockScheduler}: a blocked task delays no other, the non-blocking tasks
 * run on the timer, a group ends its own tasks, the scheduler stops after the last group.
 */
class LockSchedulerTests {

	private final LockScheduler scheduler = new LockScheduler();

	private final CountDownLatch release = new CountDownLatch(1);

	@AfterEach
	void stop() {
		this.release.countDown();
		this.scheduler.shutdown();
	}

	@Test
	void aTaskBlockedOnIoDelaysNeitherAnotherGroupsTaskNorANonBlockingOne() throws Exception {
		CountDownLatch blocked = new CountDownLatch(1);
		AtomicReference<String> blockedThread = new AtomicReference<>();
		LockScheduler.Tasks reaper = this.scheduler.tasks("reaper");
		reaper.schedule(() -> {
			blockedThread.set(Thread.currentThread().getName());
			blocked.countDown();
			awaitRelease();
		}, 0, TimeUnit.MILLISECONDS);
		assertThat(blocked.await(10, TimeUnit.SECONDS)).isTrue();
		CountDownLatch renewals = new CountDownLatch(3);
		CountDownLatch checks = new CountDownLatch(3);
		AtomicReference<String> renewalThread = new AtomicReference<>();
		AtomicReference<String> checkThread = new AtomicReference<>();
		LockScheduler.Tasks watchdog = this.scheduler.tasks("watchdog");
		watchdog.scheduleWithFixedDelay(() -> {
			renewalThread.set(Thread.currentThread().getName());
			renewals.countDown();
		}, 1, 1, TimeUnit.MILLISECONDS);
		watchdog.scheduleNonBlockingWithFixedDelay(() -> {
			checkThread.set(Thread.currentThread().getName());
			checks.countDown();
		}, 1, 1, TimeUnit.MILLISECONDS);
		assertThat(renewals.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(checks.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.release.getCount()).isOne();
		assertThat(blockedThread.get()).startsWith("db-lock-reaper-");
		assertThat(renewalThread.get()).startsWith("db-lock-watchdog-");
		assertThat(checkThread.get()).startsWith("db-lock-scheduler-");
	}

	@Test
	void aPeriodicTaskNeverRunsTwiceAtOnce() throws Exception {
		AtomicInteger running = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		CountDownLatch runs = new CountDownLatch(20);
		this.scheduler.tasks("job").scheduleWithFixedDelay(() -> {
			most.accumulateAndGet(running.incrementAndGet(), Math::max);
			Thread.yield();
			running.decrementAndGet();
			runs.countDown();
		}, 0, 1, TimeUnit.NANOSECONDS);
		assertThat(runs.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(most.get()).isOne();
	}

	@Test
	void shuttingAGroupDownCancelsAndInterruptsItsTasksAloneAndRefusesNewOnes() throws Exception {
		LockScheduler.Tasks reaper = this.scheduler.tasks("reaper");
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch interrupted = new CountDownLatch(1);
		ScheduledFuture<?> running = reaper.schedule(() -> {
			started.countDown();
			try {
				new CountDownLatch(1).await();
			}
			catch (InterruptedException ex) {
				interrupted.countDown();
			}
		}, 0, TimeUnit.MILLISECONDS);
		AtomicInteger later = new AtomicInteger();
		ScheduledFuture<?> pending = reaper.scheduleWithFixedDelay(later::incrementAndGet, 1, 1, TimeUnit.HOURS);
		CountDownLatch other = new CountDownLatch(2);
		this.scheduler.tasks("history").scheduleWithFixedDelay(other::countDown, 1, 1, TimeUnit.MILLISECONDS);
		assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
		reaper.shutdownNow();
		assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(running.isCancelled()).isTrue();
		assertThat(pending.isCancelled()).isTrue();
		assertThat(reaper.isShutdown()).isTrue();
		assertThat(other.await(10, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> reaper.schedule(() -> {
			}, 0, TimeUnit.MILLISECONDS));
		assertThat(later.get()).isZero();
	}

	@Test
	void theSchedulerStopsOnceShutDownAndEveryGroupShutDown() {
		LockScheduler.Tasks engine = this.scheduler.tasks("watchdog");
		LockScheduler.Tasks job = this.scheduler.tasks("reaper");
		engine.shutdownNow();
		this.scheduler.shutdown();
		assertThat(this.scheduler.isTerminated()).isFalse();
		assertThatIllegalStateException().isThrownBy(() -> this.scheduler.tasks("history"));
		job.shutdownNow();
		assertThat(this.scheduler.isTerminated()).isTrue();
	}

	@Test
	void anEngineStopsItsSchedulerWhenItHasShutDownAndAfterTheJobs() {
		try (HikariDataSource dataSource = TestDatabase.H2.dataSource(2)) {
			LockEngine engine = new LockEngine(new JdbcLockRepository(dataSource, TestDatabase.H2.dialect(dataSource)),
					LockEngineSettings.of(new Backoff(Duration.ofMillis(1), Duration.ofMillis(2))));
			LockScheduler.Tasks job = engine.scheduler().tasks("reaper");
			engine.shutdown(Duration.ZERO);
			assertThat(engine.scheduler().isTerminated()).isFalse();
			job.shutdownNow();
			assertThat(engine.scheduler().isTerminated()).isTrue();
		}
	}

	private void awaitRelease() {
		try {
			this.release.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
