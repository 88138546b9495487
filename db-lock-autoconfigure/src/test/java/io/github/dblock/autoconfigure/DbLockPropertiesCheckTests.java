package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.LockHandle;
import io.github.dblock.support.DbLockTemplate;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DbLockPropertiesCheck} and the statement timeout db-lock chooses when
 * none is set: each start-up error's whole message, as {@link DbLockFailureAnalyzer}
 * shows it.
 */
class DbLockPropertiesCheckTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:check" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void aShortDefaultLeaseStartsWithAStatementTimeoutOfAThirdOfIt() {
		for (String[] lease : new String[][] { { "1s", "333" }, { "2s", "666" }, { "300ms", "100" } }) {
			this.contextRunner.withPropertyValues("db-lock.default-lease=" + lease[0]).run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DbLockProperties.class).statementTimeout())
					.isEqualTo(Duration.ofMillis(Long.parseLong(lease[1])));
				try (LockHandle handle = context.getBean(DbLockTemplate.class).acquire("order:1", Duration.ZERO, null)) {
					assertThat(handle.isHeld()).isTrue();
				}
			});
		}
	}

	@Test
	void theDefaultStatementTimeoutIsTwoSecondsForLeasesOfSixSecondsOrMore() {
		this.contextRunner.run((context) -> assertThat(context.getBean(DbLockProperties.class).statementTimeout())
			.isEqualTo(Duration.ofSeconds(2)));
		this.contextRunner.withPropertyValues("db-lock.default-lease=6s")
			.run((context) -> assertThat(context.getBean(DbLockProperties.class).statementTimeout())
				.isEqualTo(Duration.ofSeconds(2)));
		this.contextRunner.withPropertyValues("db-lock.default-lease=5s")
			.run((context) -> assertThat(context.getBean(DbLockProperties.class).statementTimeout())
				.isEqualTo(Duration.ofMillis(1666)));
	}

	@Test
	void theDefaultStatementTimeoutIsHalfTheMarginASetWatchdogIntervalLeaves() {
		this.contextRunner.withPropertyValues("db-lock.default-lease=1s", "db-lock.watchdog.interval=900ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DbLockProperties.class).statementTimeout()).isEqualTo(Duration.ofMillis(50));
			});
	}

	@Test
	void aStatementTimeoutTheUserSetIsKept() {
		this.contextRunner.withPropertyValues("db-lock.default-lease=1s", "db-lock.statement-timeout=600ms")
			.run((context) -> assertThat(context.getBean(DbLockProperties.class).statementTimeout())
				.isEqualTo(Duration.ofMillis(600)));
	}

	@Test
	void eachPropertyOutOfRangeFailsStartUpWithItsMessageAndAction() {
		String positive = "Set a positive duration, such as 1s or 500ms.";
		String notNegative = "Set 0 or a positive duration.";
		String[][] cases = {
				{ "db-lock.default-lease=0s", "db-lock.default-lease=0s must be positive: a lease must last some time.",
						positive },
				{ "db-lock.default-wait=-5s", "db-lock.default-wait=-5s must not be negative: use 0 for no wait.",
						notNegative },
				{ "db-lock.local-turn=0ms",
						"db-lock.local-turn=0ms must be positive: a turn must last some time (1ms hands a lock to another "
								+ "instance almost at once).",
						positive },
				{ "db-lock.backoff.initial=0ms",
						"db-lock.backoff.initial=0ms must be positive: a pause between attempts must last some time.",
						positive },
				{ "db-lock.backoff.max=1ms", "db-lock.backoff.max=1ms is shorter than db-lock.backoff.initial (5ms).",
						"Make db-lock.backoff.max at least db-lock.backoff.initial." },
				{ "db-lock.reaper.interval=0s",
						"db-lock.reaper.interval=0s must be positive: the reaper must wait between runs.", positive },
				{ "db-lock.reaper.batch-size=0", "db-lock.reaper.batch-size=0 must be at least 1.",
						"Set it to the number of expired rows one delete may remove (default 1000)." },
				{ "db-lock.history.retention=0d",
						"db-lock.history.retention=0d must be positive: the log must keep its rows some time.", positive },
				{ "db-lock.history.flush-interval=-1ms",
						"db-lock.history.flush-interval=-1ms must be positive: the log's writer must wait between writes.",
						positive },
				{ "db-lock.recovery.interval=0s",
						"db-lock.recovery.interval=0s must be positive: the recovery job must wait between runs.",
						positive },
				{ "db-lock.recovery.max-hold=0s",
						"db-lock.recovery.max-hold=0s must be positive: a hold must be allowed some time.", positive },
				{ "db-lock.statement-timeout=0s", "db-lock.statement-timeout=0s must be at least 1ms.",
						"Set it to the longest one lock statement may take, or leave it unset (a third of "
								+ "db-lock.default-lease, at most 2s)." },
				{ "db-lock.shutdown.grace-period=-1s",
						"db-lock.shutdown.grace-period=-1s must not be negative: use 0 to release held locks at once at "
								+ "shutdown.",
						notNegative },
				{ "db-lock.watchdog.interval=0s", "db-lock.watchdog.interval=0s must be positive.",
						"Leave it unset to renew every third of the lease." },
				{ "db-lock.watchdog.interval=30s",
						"db-lock.watchdog.interval=30s is not shorter than db-lock.default-lease (30s): a lease renewed no "
								+ "sooner than it ends lets another node take the lock.",
						"Leave db-lock.watchdog.interval unset (a third of the lease), or make it shorter than the "
								+ "lease." },
				{ "db-lock.pool.size=0", "db-lock.pool.size=0 must be at least 1.",
						"Leave it unset to share the application's pool." },
				{ "db-lock.pool.connection-timeout=0s",
						"db-lock.pool.connection-timeout=0s must be positive: a lock statement must be allowed to wait "
								+ "for a connection.",
						positive } };
		for (String[] bad : cases) {
			assertFailure(new String[] { bad[0] }, bad[1], bad[2]);
		}
	}

	@Test
	void aStatementTimeoutTheUserSetAsLongAsTheRenewalMarginFailsStartUpWithTheMarginAsAPersonWritesIt() {
		assertFailure(new String[] { "db-lock.default-lease=1s", "db-lock.statement-timeout=1s" },
				"db-lock.statement-timeout=1s is not shorter than the renewal margin of the default lease (667ms: "
						+ "db-lock.default-lease minus the renewal interval): a renewal that hangs that long leaves no "
						+ "time to try again before the lease ends.",
				"Leave db-lock.statement-timeout unset (half the renewal margin, at most 2s), make it shorter, or make "
						+ "db-lock.default-lease longer.");
		assertFailure(new String[] { "db-lock.default-lease=3s", "db-lock.statement-timeout=2000ms" },
				"db-lock.statement-timeout=2000ms is not shorter than the renewal margin of the default lease (2s: "
						+ "db-lock.default-lease minus the renewal interval): a renewal that hangs that long leaves no "
						+ "time to try again before the lease ends.",
				"Leave db-lock.statement-timeout unset (half the renewal margin, at most 2s), make it shorter, or make "
						+ "db-lock.default-lease longer.");
	}

	@Test
	void aLeaseTooShortForAnyStatementTimeoutFailsStartUpNamingTheLease() {
		assertFailure(new String[] { "db-lock.default-lease=2ms" },
				"db-lock.default-lease=2ms leaves a renewal margin of 1ms (db-lock.default-lease minus the renewal "
						+ "interval), too short for one lock statement: db-lock.statement-timeout, half the margin when "
						+ "not set, must be at least 1ms.",
				"Make db-lock.default-lease at least 3ms.");
		assertFailure(new String[] { "db-lock.default-lease=1s", "db-lock.watchdog.interval=999ms" },
				"db-lock.watchdog.interval=999ms leaves a renewal margin of 1ms (db-lock.default-lease minus the "
						+ "renewal interval), too short for one lock statement: db-lock.statement-timeout, half the "
						+ "margin when not set, must be at least 1ms.",
				"Make db-lock.watchdog.interval at least 2ms shorter than db-lock.default-lease, or leave it unset (a "
						+ "third of the lease).");
	}

	@Test
	void theShortestLeaseWithADefaultStatementTimeoutStarts() {
		this.contextRunner.withPropertyValues("db-lock.default-lease=3ms").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DbLockProperties.class).statementTimeout()).isEqualTo(Duration.ofMillis(1));
		});
	}

	private void assertFailure(String[] properties, String description, String action) {
		this.contextRunner.withPropertyValues(properties).run((context) -> {
			Throwable failure = context.getStartupFailure();
			assertThat(failure).as(String.join(", ", properties)).isNotNull();
			assertThat(failure).rootCause().isInstanceOf(DbLockConfigurationException.class).hasMessage(description);
			FailureAnalysis analysis = new DbLockFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).isEqualTo(description);
			assertThat(analysis.getAction()).isEqualTo(action);
			assertThat(analysis.getCause()).isInstanceOf(DbLockConfigurationException.class);
		});
	}

}
