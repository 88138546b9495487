package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The threads of db-lock's background work on MariaDB, with every mode in use and every job
 * on: one scheduler thread, and no more workers than tasks that may be due at once.
 */
class DbLockThreadsTests {

	/** The tasks that run on a worker here: two renewals, the named check, the fair renewal and reap, three jobs. */
	private static final int WORKER_TASKS = 8;

	@Test
	void everyModeAndEveryJobShareOneScheduler() {
		TestDatabase.Connection database = TestDatabase.MARIADB.connection();
		Set<Long> before = new TreeSet<>();
		for (Thread thread : Thread.getAllStackTraces().keySet()) {
			before.add(thread.getId());
		}
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
					TransactionAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + database.url(),
					"spring.datasource.username=" + database.user(), "spring.datasource.password=" + database.password(),
					"db-lock.history.enabled=true", "db-lock.history.flush-interval=100ms",
					"db-lock.recovery.max-hold=10m", "db-lock.recovery.interval=100ms", "db-lock.reaper.interval=100ms")
			.run((context) -> {
				LockEngine engine = context.getBean(LockEngine.class);
				List<LockHandle> held = new ArrayList<>();
				Duration lease = Duration.ofSeconds(3);
				for (DbLockMode mode : List.of(DbLockMode.LEASE, DbLockMode.READ, DbLockMode.FAIR, DbLockMode.NAMED)) {
					held.add(engine.acquire(new LockRequest("threads-" + mode, Duration.ofSeconds(10), lease, true,
							Duration.ZERO, mode)));
				}
				// over two renewals of each lease, the peak of db-lock's threads born in this test
				Set<String> peak = new TreeSet<>();
				long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
				while (System.nanoTime() - end < 0) {
					Set<String> now = new TreeSet<>();
					for (Thread thread : Thread.getAllStackTraces().keySet()) {
						if (thread.getName().startsWith("db-lock-") && !before.contains(thread.getId())) {
							now.add(thread.getId() + ":" + thread.getName());
						}
					}
					if (now.size() > peak.size()) {
						peak = now;
					}
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
				}
				assertThat(held).allSatisfy((handle) -> assertThat(handle.isHeld()).isTrue());
				held.forEach(LockHandle::close);
				System.out.println("DbLockThreadsTests: db-lock threads at the peak: " + peak.size() + " " + peak);
				assertThat(peak).filteredOn((name) -> name.contains(":db-lock-scheduler-")).hasSize(1);
				assertThat(peak.size()).isLessThanOrEqualTo(1 + WORKER_TASKS);
			});
	}

}
