package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
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
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @DbLock(mode = ...)} through Spring's proxies, on H2: the transaction mode runs
 * inside {@code @Transactional}, and the start-up checks of the modes.
 */
class DbLockModesAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:modes" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void theTransactionModeLocksInsideTheMethodsTransactionUntilItsCommit() {
		this.contextRunner.withUserConfiguration(TransactionLocked.class).run((context) -> {
			assertThat(context).hasNotFailed();
			TransactionLockedService service = context.getBean(TransactionLockedService.class);
			Inside inside = service.pay(42);
			assertThat(inside.transactionActive()).isTrue();
			assertThat(inside.held()).isTrue();
			assertThat(inside.lockedForOthers()).isTrue();
			assertThat(inside.token()).isPositive();
			// committed: free for the next transaction
			assertThat(service.pay(42).token()).isGreaterThan(inside.token());
		});
	}

	@Test
	void theTransactionModeWithNoTransactionIsAClearErrorAtTheCall() {
		this.contextRunner.withUserConfiguration(TransactionLocked.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThatExceptionOfType(DbLockException.class)
				.isThrownBy(() -> context.getBean(TransactionLockedService.class).notTransactional(1))
				.withMessageContaining("no Spring transaction is active");
		});
	}

	@Test
	void theTransactionModeOnAMethodThatRefusesTransactionsFailsStartUp() {
		this.contextRunner.withUserConfiguration(NotSupported.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining("mode = TRANSACTION needs the transaction the method runs in")
				.hasMessageContaining("NOT_SUPPORTED");
		});
	}

	@Test
	void aLeaseOnAnotherModeFailsStartUp() {
		this.contextRunner.withUserConfiguration(NamedWithLease.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining("leaseMs and minHoldMs are the lease, read/write, fair and semaphore modes' alone");
		});
	}

	@Test
	void theNamedModeOnADatabaseWithoutNamedLocksFailsStartUpNamingTheMethod() {
		this.contextRunner.withUserConfiguration(Named.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.isInstanceOf(DbLockConfigurationException.class)
				.hasMessageContaining("@DbLock(mode = NAMED) on [NamedService.run]")
				.hasMessageContaining("not available on h2");
		});
	}

	@Test
	void theTransactionModeOrderedOutsideTheTransactionFailsStartUp() {
		this.contextRunner.withUserConfiguration(TransactionLocked.class, LateTransactions.class)
			.withPropertyValues("db-lock.transaction-mode-order=0")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("would run outside @Transactional");
			});
	}

	@Test
	void theFairModeHoldsATicketOfTheQueueWhileTheMethodRuns() {
		this.contextRunner.withUserConfiguration(Fair.class).run((context) -> {
			assertThat(context).hasNotFailed();
			FairService service = context.getBean(FairService.class);
			FairInside inside = service.run(7);
			assertThat(inside.held()).isTrue();
			assertThat(inside.queued()).isOne();
			// the default lease, renewed while held
			assertThat(inside.leaseLeft()).isGreaterThan(Duration.ofSeconds(20));
			assertThat(service.queued(7)).isZero();
			assertThat(service.run(7).token()).isGreaterThan(inside.token());
			FairInside fixed = service.runWithFixedLease(7);
			assertThat(fixed.held()).isTrue();
			assertThat(fixed.leaseLeft()).isLessThanOrEqualTo(Duration.ofSeconds(2));
			assertThat(service.queued(7)).isZero();
		});
	}

	@Test
	void aMinimumHoldOnTheFairModeFailsStartUp() {
		this.contextRunner.withUserConfiguration(FairWithMinimumHold.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining("minHoldMs is the lease mode's alone");
		});
	}

	@Test
	void theFairModeWithoutItsQueueTableFailsStartUpNamingTheMethod() {
		this.contextRunner.withUserConfiguration(Fair.class)
			.withPropertyValues("db-lock.schema.migrate=false")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("@DbLock(mode = FAIR) on [FairService.run, FairService.runWithFixedLease]")
					.hasMessageContaining("db_lock_fair_queue cannot be read");
			});
	}

	/** What a method of the fair mode saw while it ran. */
	record FairInside(boolean held, int queued, Duration leaseLeft, long token) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Fair {

		@Bean
		FairService fairService(JdbcTemplate jdbc) {
			return new FairService(jdbc);
		}

	}

	static class FairService {

		private final JdbcTemplate jdbc;

		FairService(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@DbLock(mode = DbLockMode.FAIR, name = "export", key = "#id", waitMs = 0)
		public FairInside run(long id) {
			return inside(id);
		}

		@DbLock(mode = DbLockMode.FAIR, name = "export", key = "#id", waitMs = 0, leaseMs = 2000)
		public FairInside runWithFixedLease(long id) {
			return inside(id);
		}

		private FairInside inside(long id) {
			LockHandle lock = DbLockContext.current().orElseThrow();
			return new FairInside(lock.isHeld(), queued(id), Duration.between(Instant.now(), lock.expiresAt()),
					lock.fencingToken());
		}

		int queued(long id) {
			return this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_fair_queue WHERE lock_key = ?", Integer.class,
					"export:" + id);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FairWithMinimumHold {

		@Bean
		FairWithMinimumHoldService fairWithMinimumHoldService() {
			return new FairWithMinimumHoldService();
		}

	}

	static class FairWithMinimumHoldService {

		@DbLock(mode = DbLockMode.FAIR, minHoldMs = 1000)
		public void run() {
		}

	}

	/** What a method of the transaction mode saw while it ran. */
	record Inside(boolean transactionActive, boolean held, boolean lockedForOthers, long token) {
	}

	@Configuration(proxyBeanMethods = false)
	static class TransactionLocked {

		@Bean
		TransactionLockedService transactionLockedService(JdbcTemplate jdbc, PlatformTransactionManager transactions) {
			return new TransactionLockedService(jdbc, transactions);
		}

	}

	static class TransactionLockedService {

		private final JdbcTemplate jdbc;

		private final TransactionTemplate newTransaction;

		TransactionLockedService(JdbcTemplate jdbc, PlatformTransactionManager transactions) {
			this.jdbc = jdbc;
			this.newTransaction = new TransactionTemplate(transactions);
			this.newTransaction.setPropagationBehavior(TransactionTemplate.PROPAGATION_REQUIRES_NEW);
		}

		@Transactional
		@DbLock(mode = DbLockMode.TRANSACTION, name = "order", key = "#orderId", waitMs = 0)
		public Inside pay(long orderId) {
			LockHandle lock = DbLockContext.current().orElseThrow();
			// another transaction, on another connection, finds the row locked
			Boolean lockedForOthers = this.newTransaction.execute((status) -> this.jdbc
				.queryForList("SELECT lock_key FROM db_lock_keys WHERE lock_key = ? FOR UPDATE SKIP LOCKED", String.class,
						"order:" + orderId)
				.isEmpty());
			return new Inside(TransactionSynchronizationManager.isActualTransactionActive(), lock.isHeld(),
					Boolean.TRUE.equals(lockedForOthers), lock.fencingToken());
		}

		@DbLock(mode = DbLockMode.TRANSACTION, name = "order", key = "#orderId", waitMs = 0)
		public void notTransactional(long orderId) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement(order = Ordered.LOWEST_PRECEDENCE)
	static class LateTransactions {

	}

	@Configuration(proxyBeanMethods = false)
	static class NotSupported {

		@Bean
		NotSupportedService notSupportedService() {
			return new NotSupportedService();
		}

	}

	static class NotSupportedService {

		@Transactional(propagation = Propagation.NOT_SUPPORTED)
		@DbLock(mode = DbLockMode.TRANSACTION)
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NamedWithLease {

		@Bean
		NamedWithLeaseService namedWithLeaseService() {
			return new NamedWithLeaseService();
		}

	}

	static class NamedWithLeaseService {

		@DbLock(mode = DbLockMode.NAMED, leaseMs = 5000)
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Named {

		@Bean
		NamedService namedService() {
			return new NamedService();
		}

	}

	static class NamedService {

		@DbLock(mode = DbLockMode.NAMED)
		public void run() {
		}

	}

}
