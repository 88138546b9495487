package io.github.dblock.engine;

import java.lang.reflect.Field;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.jdbc.dialect.MariaDbDialect;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.UncategorizedSQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Faults under the one scheduler of the background work, injected deterministically: a
 * database that stalls the orphans' delete, a worker that cannot be had.
 */
class LockSchedulerFaultTests {

	private static final Duration LONG = Duration.ofSeconds(30);

	@Test
	void orphanDeletesRunOneAtATimeWhileTheDatabaseStalls() throws Exception {
		LockScheduler scheduler = new LockScheduler();
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch stall = new CountDownLatch(1);
		AtomicInteger running = new AtomicInteger();
		AtomicInteger mostAtOnce = new AtomicInteger();
		Orphans orphans = new Orphans("rows", (batch) -> {
			mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
			started.countDown();
			try {
				stall.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			running.decrementAndGet();
			return 0;
		}, scheduler);
		try {
			orphans.abandon("k0", "owner-0", Duration.ofMinutes(5));
			assertThat(started.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
			for (int i = 1; i < 20; i++) {
				orphans.abandon("k" + i, "owner-" + i, Duration.ofMinutes(5));
			}
			// before the fix each of these started a delete of its own on a new worker at once
			await().during(Duration.ofMillis(300)).atMost(LONG).until(() -> running.get() == 1);
			stall.countDown();
			await().atMost(LONG).until(() -> running.get() == 0);
			assertThat(mostAtOnce.get()).isEqualTo(1);
			assertThat(orphans.pending()).isEqualTo(20);
		}
		finally {
			stall.countDown();
			orphans.close();
			scheduler.shutdown();
		}
	}

	@Test
	void aPeriodicTaskThatCouldNotGetAWorkerIsTriedAgain() throws Exception {
		LockScheduler scheduler = new LockScheduler();
		AtomicInteger made = new AtomicInteger();
		// the second worker thread cannot be created, as when the JVM has no thread left
		ThreadPoolExecutor failingOnce = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
				new SynchronousQueue<>(), (task) -> {
					if (made.incrementAndGet() == 2) {
						throw new OutOfMemoryError("unable to create native thread (injected)");
					}
					Thread thread = new Thread(task);
					thread.setDaemon(true);
					return thread;
				});
		Field workers = LockScheduler.class.getDeclaredField("workers");
		workers.setAccessible(true);
		workers.set(scheduler, failingOnce);
		LockScheduler.Tasks other = scheduler.tasks("other");
		LockScheduler.Tasks sweeps = scheduler.tasks("watchdog");
		CountDownLatch busy = new CountDownLatch(1);
		CountDownLatch hold = new CountDownLatch(1);
		try {
			other.schedule(() -> {
				busy.countDown();
				try {
					hold.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}, 0, TimeUnit.MILLISECONDS);
			assertThat(busy.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
			AtomicInteger runs = new AtomicInteger();
			sweeps.scheduleWithFixedDelay(runs::incrementAndGet, 10, 10, TimeUnit.MILLISECONDS);
			await().atMost(LONG).until(() -> runs.get() > 0);
			assertThat(made.get()).isGreaterThanOrEqualTo(3);
		}
		finally {
			hold.countDown();
			sweeps.shutdownNow();
			other.shutdownNow();
			scheduler.shutdown();
		}
	}

	@Test
	void anAutoIncrementLockFailureIsContention() {
		SQLException autoIncrement = new SQLException("Failed to read auto-increment value from storage engine",
				"HY000", 1467);
		assertThat(new MariaDbDialect("db_lock").errors()
			.isContention(new UncategorizedSQLException("insert", "INSERT ... SELECT", autoIncrement))).isTrue();
	}

}
