package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.FailurePolicy;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Failure policies, fallbacks, minimum hold and lost-lease reporting of {@code @DbLock},
 * on an embedded H2 per test. "Another node" holds a lock by a row it wrote itself.
 */
class DbLockPoliciesTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:policies" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context))
		.withPropertyValues("db-lock.default-lease=1s", "db-lock.statement-timeout=500ms")
		.withUserConfiguration(Services.class);

	@Test
	void skipReturnsAnEmptyValueOfTheReturnType() {
		this.contextRunner.run((context) -> {
			heldByAnotherNode(context, "busy");
			PolicyService service = context.getBean(PolicyService.class);
			assertThat(service.skipString()).isNull();
			assertThat(service.skipOptional()).isEmpty();
			assertThat(service.skipInt()).isZero();
			assertThat(service.skipBoolean()).isFalse();
			assertThat(service.runs()).isZero();
		});
	}

	@Test
	void throwIsTheDefault() {
		this.contextRunner.run((context) -> {
			heldByAnotherNode(context, "busy");
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(context.getBean(PolicyService.class)::throwing)
				.withMessageContaining("'busy'");
		});
	}

	@Test
	void aFallbackIsCalledWithTheArgumentsAndOptionallyTheException() {
		this.contextRunner.run((context) -> {
			heldByAnotherNode(context, "order:7");
			PolicyService service = context.getBean(PolicyService.class);
			assertThat(service.pay(7)).isEqualTo("already being processed: 7");
			assertThat(service.refund(7)).isEqualTo("refund later: order:7");
			assertThat(service.pay(8)).isEqualTo("paid 8");
		});
	}

	@Test
	void aFallbackThatDoesNotMatchFailsStartUp() {
		this.contextRunner.withUserConfiguration(BadFallback.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("BadFallbackService.pay(long)")
				.hasMessageContaining("fallback \"missing\"");
		});
	}

	@Test
	void aMinimumHoldKeepsTheRowAfterTheMethodReturns() {
		this.contextRunner.run((context) -> {
			context.getBean(PolicyService.class).nightlyReport();
			assertThat(context.getBean(JdbcTemplate.class)
				.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key = 'nightly-report'", Integer.class))
				.isEqualTo(1);
		});
	}

	@Test
	void aLostLeaseThrowsWithTheResultByDefault() {
		this.contextRunner.run((context) -> assertThatExceptionOfType(LockLostException.class)
			.isThrownBy(() -> context.getBean(PolicyService.class).losesItsLease())
			.satisfies((ex) -> assertThat(ex.getResult()).isEqualTo("result")));
	}

	@Test
	void aLostLeaseIsOnlyLoggedWhenConfigured() {
		this.contextRunner.withPropertyValues("db-lock.on-lost-lease=log")
			.run((context) -> assertThat(context.getBean(PolicyService.class).losesItsLease()).isEqualTo("result"));
	}

	private static void heldByAnotherNode(AssertableApplicationContext context, String key) {
		context.getBean(JdbcTemplate.class)
			.update("INSERT INTO db_lock (lock_key, owner, token, acquired_at, expires_at) VALUES (?, 'other-node', "
					+ "NEXT VALUE FOR db_lock_token_seq, CURRENT_TIMESTAMP, DATEADD(HOUR, 1, CURRENT_TIMESTAMP))", key);
	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		PolicyService policyService(JdbcTemplate jdbc) {
			return new PolicyService(jdbc);
		}

	}

	static class PolicyService {

		final AtomicLong runs = new AtomicLong();

		private final JdbcTemplate jdbc;

		PolicyService(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		public long runs() {
			return this.runs.get();
		}

		@DbLock(name = "busy", waitMs = 0, onFailure = FailurePolicy.SKIP)
		public String skipString() {
			this.runs.incrementAndGet();
			return "ran";
		}

		@DbLock(name = "busy", waitMs = 0, onFailure = FailurePolicy.SKIP)
		public Optional<String> skipOptional() {
			this.runs.incrementAndGet();
			return Optional.of("ran");
		}

		@DbLock(name = "busy", waitMs = 0, onFailure = FailurePolicy.SKIP)
		public int skipInt() {
			this.runs.incrementAndGet();
			return 1;
		}

		@DbLock(name = "busy", waitMs = 0, onFailure = FailurePolicy.SKIP)
		public boolean skipBoolean() {
			this.runs.incrementAndGet();
			return true;
		}

		@DbLock(name = "busy", waitMs = 0)
		public void throwing() {
			this.runs.incrementAndGet();
		}

		@DbLock(name = "order", key = "#orderId", waitMs = 0, fallback = "alreadyBeingProcessed")
		public String pay(long orderId) {
			return "paid " + orderId;
		}

		String alreadyBeingProcessed(long orderId) {
			return "already being processed: " + orderId;
		}

		@DbLock(name = "order", key = "#orderId", waitMs = 0, fallback = "refundLater")
		public String refund(long orderId) {
			return "refunded " + orderId;
		}

		String refundLater(long orderId, LockAcquisitionException ex) {
			return "refund later: " + ex.getKey();
		}

		@DbLock(name = "nightly-report", waitMs = 0, minHoldMs = 60_000)
		public void nightlyReport() {
		}

		@DbLock(name = "loses-lease")
		public String losesItsLease() {
			LockHandle handle = DbLockContext.current().orElseThrow();
			this.jdbc.update("DELETE FROM db_lock WHERE lock_key = ?", handle.key());
			await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
			return "result";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadFallback {

		@Bean
		BadFallbackService badFallbackService() {
			return new BadFallbackService();
		}

	}

	static class BadFallbackService {

		@DbLock(key = "#orderId", fallback = "missing")
		public String pay(long orderId) {
			return "paid";
		}

		String missing(String orderId) {
			return "wrong parameters";
		}

	}

}
