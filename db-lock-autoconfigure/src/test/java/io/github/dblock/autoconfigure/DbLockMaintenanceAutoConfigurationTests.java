package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockScheduler;
import io.github.dblock.maintenance.LockHistory;
import io.github.dblock.maintenance.LockReaper;
import io.github.dblock.maintenance.LockRecovery;
import io.github.dblock.support.DbLockTemplate;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.SmartLifecycle;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the maintenance jobs of {@link DbLockAutoConfiguration}: the reaper, the
 * recovery job and the lock log are {@link SmartLifecycle} beans, started with the context
 * on the engine's scheduler and stopped when it closes, after the engine's shutdown.
 */
class DbLockMaintenanceAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:maintenance" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void theJobsAreLifecycleBeansStartedWithTheContextAndStoppedWhenItCloses() {
		AtomicReference<List<SmartLifecycle>> jobs = new AtomicReference<>();
		AtomicReference<LockScheduler> scheduler = new AtomicReference<>();
		this.contextRunner.withPropertyValues("db-lock.history.enabled=true", "db-lock.recovery.max-hold=10m")
			.run((context) -> {
				assertThat(context).hasSingleBean(LockReaper.class)
					.hasSingleBean(LockRecovery.class)
					.hasSingleBean(LockHistory.class);
				Map<String, SmartLifecycle> lifecycles = context.getBeansOfType(SmartLifecycle.class);
				List<SmartLifecycle> started = List.of(context.getBean(LockReaper.class),
						context.getBean(LockRecovery.class), context.getBean(LockHistory.class));
				assertThat(lifecycles.values()).containsAll(started);
				assertThat(started).allSatisfy((job) -> {
					assertThat(job.isAutoStartup()).isTrue();
					assertThat(job.isRunning()).isTrue();
					// stopped after the engine's shutdown
					assertThat(job.getPhase()).isLessThan(DbLockShutdown.PHASE);
				});
				jobs.set(started);
				scheduler.set(context.getBean(LockEngine.class).scheduler());
				assertThat(scheduler.get().isTerminated()).isFalse();
			});
		assertThat(jobs.get()).allSatisfy((job) -> assertThat(job.isRunning()).isFalse());
		assertThat(scheduler.get().isTerminated()).isTrue();
	}

	@Test
	void aContextStoppedAndStartedAgainStartsWithTheJobsIdleOnTheShutDownEngine() {
		this.contextRunner.withPropertyValues("db-lock.recovery.max-hold=10m").run((context) -> {
			context.stop();
			assertThat(context.getBean(LockEngine.class).scheduler().isTerminated()).isTrue();
			context.start();
			assertThat(context.getBean(LockReaper.class).isRunning()).isFalse();
			assertThat(context.getBean(LockRecovery.class).isRunning()).isFalse();
		});
	}

	@Test
	void theReaperIsOffWhenDisabledAndTheLogAndRecoveryUnlessAskedFor() {
		this.contextRunner.withPropertyValues("db-lock.reaper.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LockReaper.class)
				.doesNotHaveBean(LockRecovery.class)
				.doesNotHaveBean(LockHistory.class));
	}

	@Test
	void aLockStillHeldWhenTheContextClosesIsLoggedAsGivenUpByTheEnginesShutdown() {
		AtomicReference<String> url = new AtomicReference<>();
		AtomicReference<LockHandle> held = new AtomicReference<>();
		this.contextRunner
			.withPropertyValues("db-lock.history.enabled=true", "db-lock.history.flush-interval=1h",
					"db-lock.shutdown.grace-period=0s")
			.run((context) -> {
				url.set(context.getEnvironment().getProperty("spring.datasource.url"));
				held.set(context.getBean(DbLockTemplate.class).acquire("log-held-at-close", null, null));
				assertThat(held.get().isHeld()).isTrue();
			});
		// its holder ends it after the engine's shutdown gave it up: the log says lost, as the shutdown reported
		held.get().close();
		JdbcTemplate jdbc = new JdbcTemplate(new SimpleDriverDataSource(new org.h2.Driver(), url.get(), "sa", ""));
		assertThat(jdbc.queryForList("SELECT outcome FROM db_lock_history WHERE lock_key = 'log-held-at-close'",
				String.class))
			.containsExactly("lost");
	}

}
