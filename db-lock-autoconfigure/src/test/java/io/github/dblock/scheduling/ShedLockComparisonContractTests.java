package io.github.dblock.scheduling;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.JdbcSlotRepository;
import io.github.dblock.jdbc.LockConnections;
import io.github.dblock.testsupport.TestDatabase;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The double run ShedLock users report (ShedLock issues #6, #116, #870), next to
 * {@code @OncePerSlot}: two nodes whose clocks are 2 s apart fire a 1 s task on a 5 s
 * schedule. Each node is a scheduler of its own in this JVM that fires at its clock's
 * multiples of 5 s: node A, 2 s ahead, at the true multiples minus 2 s; node B at the true
 * multiples. ShedLock ({@code JdbcTemplateLockProvider} on the database's time, lockAtMostFor
 * 4 s, lockAtLeastFor 1 s, shorter than the skew, the usual setting for a 1 s task) lets
 * node B take the lock node A released a second earlier: each slot runs twice. With
 * {@code @OncePerSlot}, both fires map to the same slot: it runs once.
 */
abstract class ShedLockComparisonContractTests {

	private static final long PERIOD_MILLIS = 5000;

	private static final long SKEW_MILLIS = 2000;

	private static final long TASK_MILLIS = 1000;

	private static final int SLOTS = 6;

	private static final String SHEDLOCK_TABLE = TestDatabase.TABLE_PREFIX + "_test_shedlock";

	protected abstract TestDatabase database();

	@Test
	void twoNodesTwoSecondsApartRunEachFiveSecondSlotTwiceWithShedLockAndOnceWithOncePerSlot() throws Exception {
		try (HikariDataSource nodeAData = database().dataSource(4); HikariDataSource nodeBData = database().dataSource(4)) {
			JdbcTemplate jdbc = new JdbcTemplate(nodeAData);
			createShedLockTable(jdbc, database());
			jdbc.update("DELETE FROM " + SHEDLOCK_TABLE);
			jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_slot");
			// each slot's runs, by the slot's index, whoever ran it
			AtomicIntegerArray shedLockRuns = new AtomicIntegerArray(SLOTS);
			AtomicIntegerArray oncePerSlotRuns = new AtomicIntegerArray(SLOTS);
			long first = Math.floorDiv(System.currentTimeMillis() + 4000, PERIOD_MILLIS) * PERIOD_MILLIS + PERIOD_MILLIS;
			List<ScheduledExecutorService> schedulers = new ArrayList<>();
			try {
				// node A, clock 2 s ahead: fires 2 s before each slot
				schedule(schedulers, first - SKEW_MILLIS, shedLockRuns, oncePerSlotRuns, nodeAData);
				// node B, on time
				schedule(schedulers, first, shedLockRuns, oncePerSlotRuns, nodeBData);
				for (ScheduledExecutorService scheduler : schedulers) {
					scheduler.shutdown();
					assertThat(scheduler.awaitTermination(SLOTS * PERIOD_MILLIS + 30_000, TimeUnit.MILLISECONDS)).isTrue();
				}
			}
			finally {
				schedulers.forEach(ScheduledExecutorService::shutdownNow);
			}
			int shedLockTotal = 0;
			int shedLockDoubles = 0;
			int oncePerSlotTotal = 0;
			int oncePerSlotDoubles = 0;
			for (int slot = 0; slot < SLOTS; slot++) {
				shedLockTotal += shedLockRuns.get(slot);
				shedLockDoubles += (shedLockRuns.get(slot) > 1) ? 1 : 0;
				oncePerSlotTotal += oncePerSlotRuns.get(slot);
				oncePerSlotDoubles += (oncePerSlotRuns.get(slot) > 1) ? 1 : 0;
			}
			System.out.println("ShedLock vs @OncePerSlot on " + database() + ", 2 nodes 2 s apart, 1 s task every 5 s, "
					+ SLOTS + " slots: ShedLock (lockAtLeastFor 1 s) runs " + shedLockTotal + ", slots run twice "
					+ shedLockDoubles + "; @OncePerSlot runs " + oncePerSlotTotal + ", slots run twice "
					+ oncePerSlotDoubles);
			assertThat(shedLockDoubles).isPositive();
			assertThat(oncePerSlotDoubles).isZero();
			for (int slot = 0; slot < SLOTS; slot++) {
				assertThat(oncePerSlotRuns.get(slot)).as("@OncePerSlot runs of slot %d", slot).isEqualTo(1);
			}
		}
	}

	/**
	 * A node: two schedulers firing every 5 s from a time, one running the task under
	 * ShedLock, the other through {@code @OncePerSlot}; each fires {@link #SLOTS} times.
	 */
	private void schedule(List<ScheduledExecutorService> schedulers, long firstFire, AtomicIntegerArray shedLockRuns,
			AtomicIntegerArray oncePerSlotRuns, HikariDataSource dataSource) {
		LockProvider shedLock = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
			.withJdbcTemplate(new JdbcTemplate(dataSource))
			.withTableName(SHEDLOCK_TABLE)
			.usingDbTime()
			.build());
		ProxyFactory factory = new ProxyFactory(new Report());
		factory.setProxyTargetClass(true);
		factory.addAdvisor(new OncePerSlotAdvisor(
				() -> new JdbcSlotRepository(
						new LockConnections(dataSource, database().dialect(dataSource), Duration.ofSeconds(2))),
				null, "", 255, Duration.ofDays(1), 0));
		Report report = (Report) factory.getProxy();
		ScheduledExecutorService shedLockNode = Executors.newSingleThreadScheduledExecutor();
		ScheduledExecutorService oncePerSlotNode = Executors.newSingleThreadScheduledExecutor();
		schedulers.add(shedLockNode);
		schedulers.add(oncePerSlotNode);
		for (int slot = 0; slot < SLOTS; slot++) {
			int index = slot;
			long delay = firstFire + slot * PERIOD_MILLIS - System.currentTimeMillis();
			shedLockNode.schedule(() -> {
				Optional<SimpleLock> lock = shedLock.lock(new LockConfiguration(Instant.now(), "report",
						Duration.ofSeconds(4), Duration.ofMillis(TASK_MILLIS)));
				if (lock.isPresent()) {
					try {
						shedLockRuns.incrementAndGet(index);
						work();
					}
					finally {
						lock.get().unlock();
					}
				}
			}, delay, TimeUnit.MILLISECONDS);
			oncePerSlotNode.schedule(() -> {
				if (report.run()) {
					oncePerSlotRuns.incrementAndGet(index);
				}
			}, delay, TimeUnit.MILLISECONDS);
		}
	}

	/** The task's second of work. */
	private static void work() {
		java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TASK_MILLIS));
	}

	private static void createShedLockTable(JdbcTemplate jdbc, TestDatabase database) {
		String time = (database == TestDatabase.POSTGRESQL) ? "TIMESTAMP" : "TIMESTAMP(3)";
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + SHEDLOCK_TABLE + " (name VARCHAR(64) NOT NULL, lock_until " + time
				+ " NOT NULL, locked_at " + time + " NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
	}

	/** The task under {@code @OncePerSlot}, on the same 5 s schedule. */
	static class Report {

		@Scheduled(fixedRate = PERIOD_MILLIS)
		@OncePerSlot(name = "report")
		public boolean run() {
			work();
			return true;
		}

	}

}
