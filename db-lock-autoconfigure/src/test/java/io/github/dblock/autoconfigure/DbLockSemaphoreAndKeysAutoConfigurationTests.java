package io.github.dblock.autoconfigure;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.testsupport.Concurrently;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DbLock(mode = SEMAPHORE, permits = ...)} and {@code @DbLock(keys = ...)} through
 * Spring's proxies, on H2, and their start-up checks.
 */
class DbLockSemaphoreAndKeysAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:semaphore" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void aSemaphoreMethodRunsAtMostPermitsTimesAtOnce() {
		this.contextRunner.withUserConfiguration(Semaphore.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Exports exports = context.getBean(Exports.class);
			Concurrently.run(6, (thread) -> {
				for (int i = 0; i < 20; i++) {
					exports.run();
				}
			});
			// read through methods: the proxy's own fields are not the bean's
			assertThat(exports.violations()).isZero();
			assertThat(exports.most()).isBetween(1, 2);
			assertThat(exports.lastKey()).startsWith("exports:all#permit-");
		});
	}

	@Test
	void aMethodOfSeveralKeysHoldsThemAllInKeyOrder() {
		this.contextRunner.withUserConfiguration(Transfers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(Accounts.class).transfer(7, 3))
				.containsExactly("account:3", "account:7");
			// equal values are one key
			assertThat(context.getBean(Accounts.class).transfer(4, 4)).containsExactly("account:4");
		});
	}

	@Test
	void theSemaphoreModeWithoutItsTableFailsStartUpNamingTheMethod() {
		this.contextRunner.withUserConfiguration(Semaphore.class)
			.withPropertyValues("db-lock.schema.migrate=false")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("@DbLock(mode = SEMAPHORE) on [Exports.run]")
					.hasMessageContaining("db_lock_semaphore cannot be read");
			});
	}

	@Test
	void keyWithKeysFailsStartUp() {
		assertStartUpFails(KeyAndKeys.class, "key and keys are exclusive");
	}

	@Test
	void aBlankKeyAmongKeysFailsStartUp() {
		assertStartUpFails(BlankKeys.class, "has a blank expression");
	}

	@Test
	void aKeyNamedTwiceAmongKeysFailsStartUp() {
		assertStartUpFails(DuplicateKeys.class, "names a key twice");
	}

	@Test
	void keysInTheTransactionModeFailStartUp() {
		assertStartUpFails(TransactionKeys.class, "keys cannot be taken together in the TRANSACTION mode");
	}

	@Test
	void keysInTheSemaphoreModeFailStartUp() {
		assertStartUpFails(SemaphoreKeys.class, "keys cannot be taken together in the SEMAPHORE mode");
	}

	@Test
	void noPermitFailsStartUp() {
		assertStartUpFails(NoPermit.class, "permits must be at least 1, got 0");
	}

	@Test
	void permitsOutsideTheSemaphoreModeFailStartUp() {
		assertStartUpFails(LeasePermits.class, "permits = 3 is the SEMAPHORE mode's alone");
	}

	private void assertStartUpFails(Class<?> configuration, String message) {
		this.contextRunner.withUserConfiguration(configuration).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining("Invalid @DbLock on")
				.hasMessageContaining(message);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Semaphore {

		@Bean
		Exports exports() {
			return new Exports();
		}

	}

	static class Exports {

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger most = new AtomicInteger();

		final AtomicInteger violations = new AtomicInteger();

		final AtomicReference<String> keys = new AtomicReference<>();

		public int violations() {
			return this.violations.get();
		}

		public int most() {
			return this.most.get();
		}

		public String lastKey() {
			return this.keys.get();
		}

		@DbLock(mode = DbLockMode.SEMAPHORE, name = "exports", key = "'all'", permits = 2, waitMs = 60000)
		public void run() {
			int now = this.inside.incrementAndGet();
			this.most.accumulateAndGet(now, Math::max);
			if (now > 2) {
				this.violations.incrementAndGet();
			}
			this.keys.set(DbLockContext.current().orElseThrow().key());
			Thread.yield();
			this.inside.decrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Transfers {

		@Bean
		Accounts accounts() {
			return new Accounts();
		}

	}

	static class Accounts {

		@DbLock(name = "account", keys = { "#p0", "#p1" })
		public List<String> transfer(long from, long to) {
			return DbLockContext.all().stream().map(LockHandle::key).toList();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class KeyAndKeys {

		@Bean
		Object keyAndKeys() {
			return new Object() {

				@DbLock(key = "#p0", keys = { "#p0", "#p1" })
				public void run(long a, long b) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BlankKeys {

		@Bean
		Object blankKeys() {
			return new Object() {

				@DbLock(keys = { "#p0", " " })
				public void run(long a) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DuplicateKeys {

		@Bean
		Object duplicateKeys() {
			return new Object() {

				@DbLock(keys = { "#p0", "#p0" })
				public void run(long a) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TransactionKeys {

		@Bean
		Object transactionKeys() {
			return new Object() {

				@DbLock(mode = DbLockMode.TRANSACTION, keys = { "#p0", "#p1" })
				public void run(long a, long b) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SemaphoreKeys {

		@Bean
		Object semaphoreKeys() {
			return new Object() {

				@DbLock(mode = DbLockMode.SEMAPHORE, keys = { "#p0", "#p1" }, permits = 3)
				public void run(long a, long b) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoPermit {

		@Bean
		Object noPermit() {
			return new Object() {

				@DbLock(mode = DbLockMode.SEMAPHORE, permits = 0)
				public void run() {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LeasePermits {

		@Bean
		Object leasePermits() {
			return new Object() {

				@DbLock(permits = 3)
				public void run() {
				}

			};
		}

	}

}
