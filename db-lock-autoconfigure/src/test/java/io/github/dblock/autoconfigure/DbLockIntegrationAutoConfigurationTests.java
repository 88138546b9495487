package io.github.dblock.autoconfigure;

import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.integration.DbLockRegistry;
import io.github.dblock.support.DbLockTemplate;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DbLockIntegrationAutoConfiguration}, on an embedded H2 per test.
 */
class DbLockIntegrationAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, DbLockAutoConfiguration.class,
				DbLockIntegrationAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:integration" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void withSpringIntegrationTheLockRegistryIsDbLocks() {
		this.contextRunner.withPropertyValues("db-lock.key-prefix=app").run((context) -> {
			assertThat(context).hasSingleBean(LockRegistry.class).hasSingleBean(DbLockRegistry.class);
			DbLockRegistry registry = context.getBean(DbLockRegistry.class);
			DistributedLock lock = registry.obtain("orders");
			assertThat(lock.tryLock()).isTrue();
			try {
				assertThat(context.getBean(DbLockTemplate.class).obtain("orders").current().key())
					.isEqualTo("app:orders");
			}
			finally {
				lock.unlock();
			}
		});
	}

	@Test
	void aLockRegistryOfTheApplicationMakesItBackOff() {
		this.contextRunner.withUserConfiguration(UserLockRegistry.class).run((context) -> {
			assertThat(context).hasSingleBean(LockRegistry.class).doesNotHaveBean(DbLockRegistry.class);
			assertThat(context.getBean(LockRegistry.class)).isSameAs(context.getBean(UserLockRegistry.class).registry);
		});
	}

	@Test
	void withoutSpringIntegrationThereIsNoRegistry() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(LockRegistry.class)).run((context) -> {
			assertThat(context).hasSingleBean(DbLockTemplate.class).doesNotHaveBean(DbLockRegistry.class);
		});
	}

	@Test
	void disabledDbLockGivesNoRegistry() {
		this.contextRunner.withPropertyValues("db-lock.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DbLockTemplate.class).doesNotHaveBean(LockRegistry.class);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserLockRegistry {

		final DefaultLockRegistry registry = new DefaultLockRegistry();

		@Bean
		DefaultLockRegistry userLockRegistry() {
			return this.registry;
		}

	}

}
