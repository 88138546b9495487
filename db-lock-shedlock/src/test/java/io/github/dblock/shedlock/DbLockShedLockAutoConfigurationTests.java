package io.github.dblock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLockContext;
import io.github.dblock.LockHandle;
import io.github.dblock.actuate.DbLockMetrics;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.metrics.DbLockMetricsAutoConfiguration;
import io.github.dblock.jdbc.LockRepository;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DbLockShedLockAutoConfiguration}, on an embedded H2 per test.
 */
class DbLockShedLockAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, DbLockAutoConfiguration.class, MetricsAutoConfiguration.class,
				DbLockMetricsAutoConfiguration.class, DbLockShedLockAutoConfiguration.class))
		.withUserConfiguration(Registry.class)
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:shedlockconfig" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void db_lockIsTheLockProviderWhereTheApplicationHasNone() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(LockProvider.class).hasBean("dbLockShedLockProvider");
			assertThat(context.getBean(LockProvider.class)).isInstanceOf(DbLockShedLockProvider.class);
		});
	}

	@Test
	void theApplicationsOwnLockProviderIsKept() {
		LockProvider own = (configuration) -> Optional.empty();
		this.contextRunner.withBean("lockProvider", LockProvider.class, () -> own).run((context) -> {
			assertThat(context).hasSingleBean(LockProvider.class).doesNotHaveBean(DbLockShedLockProvider.class);
			assertThat(context.getBean(LockProvider.class)).isSameAs(own);
		});
	}

	@Test
	void withoutShedLockThereIsNoLockProvider() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(LockProvider.class))
			.run((context) -> assertThat(context).doesNotHaveBean("dbLockShedLockProvider"));
	}

	@Test
	void withDbLockDisabledThereIsNoLockProvider() {
		this.contextRunner.withPropertyValues("db-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LockProvider.class));
	}

	@Test
	void locksAreStoredWithTheKeyPrefixAndCountInDbLocksMeters() {
		this.contextRunner.withPropertyValues("db-lock.key-prefix=app").run((context) -> {
			LockProvider provider = context.getBean(LockProvider.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			provider.lock(configuration("report")).orElseThrow().unlock();
			// another owner holds the key "app:export": skipped, counted as a zero wait that timed out
			context.getBean(LockRepository.class).tryAcquire("app:export", "another-node", Duration.ofMinutes(1));
			assertThat(provider.lock(configuration("export"))).isEmpty();
			assertThat(registry.get(DbLockMetrics.ACQUIRE)
				.tags("name", "report", "mode", "lease", "outcome", "acquired")
				.timer()
				.count()).isOne();
			assertThat(registry.get(DbLockMetrics.ACQUIRE)
				.tags("name", "export", "mode", "lease", "outcome", "timed_out")
				.timer()
				.count()).isOne();
			assertThat(registry.get(DbLockMetrics.HELD).tags("name", "report", "mode", "lease").timer().count()).isOne();
		});
	}

	@Test
	void aSchedulerLockMethodRunsUnderADbLockThatItsCodeCanRead() {
		this.contextRunner.withUserConfiguration(SchedulerLockConfiguration.class).run((context) -> {
			Reports reports = context.getBean(Reports.class);
			reports.run();
			assertThat(reports.seen()).singleElement().satisfies((lock) -> {
				assertThat(lock.key()).isEqualTo("reports");
				assertThat(lock.isHeld()).isFalse();
			});
			// held by another node: ShedLock skips the method
			context.getBean(LockRepository.class).tryAcquire("reports", "another-node", Duration.ofMinutes(1));
			reports.run();
			assertThat(reports.seen()).hasSize(1);
		});
	}

	private static LockConfiguration configuration(String name) {
		return new LockConfiguration(Instant.now(), name, Duration.ofSeconds(30), Duration.ZERO);
	}

	@Configuration(proxyBeanMethods = false)
	static class Registry {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
	static class SchedulerLockConfiguration {

		@Bean
		Reports reports() {
			return new Reports();
		}

	}

	/** A job as an application has it, called here directly rather than by a scheduler. */
	public static class Reports {

		private final List<LockHandle> seen = new ArrayList<>();

		@SchedulerLock(name = "reports")
		public void run() {
			LockHandle lock = DbLockContext.current().orElseThrow();
			assertThat(lock.isHeld()).isTrue();
			this.seen.add(lock);
		}

		public List<LockHandle> seen() {
			return this.seen;
		}

	}

}
