package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockException;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.aop.DbLockAdvisor;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.ConnectionLockRepository;
import io.github.dblock.jdbc.dialect.Database;
import io.github.dblock.jdbc.dialect.H2Dialect;
import io.github.dblock.maintenance.LockHistory;
import io.github.dblock.maintenance.LockRecovery;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockConnections;
import io.github.dblock.jdbc.LockHistoryRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.dialect.MySqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link DbLockAutoConfiguration}, on an embedded H2 per test.
 */
@ExtendWith(OutputCaptureExtension.class)
class DbLockAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:autoconfig" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void defaultsGiveATemplateAndAnAdvisorOnAMigratedTable() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(DbLockTemplate.class)
				.hasSingleBean(LockEngine.class)
				.hasSingleBean(JdbcLockRepository.class)
				.hasSingleBean(DbLockSchemaMigration.class)
				.hasBean("dbLockAdvisor")
				.hasBean("dbLockTransactionModeAdvisor");
			assertThat(context.getBean(SqlDialect.class)).isInstanceOf(H2Dialect.class);
			DbLockProperties properties = context.getBean(DbLockProperties.class);
			assertThat(properties.getTableName()).isEqualTo("db_lock");
			assertThat(properties.getKeyPrefix()).isEmpty();
			assertThat(properties.getDefaultWait()).isEqualTo(Duration.ofSeconds(3));
			assertThat(properties.getDefaultLease()).isEqualTo(Duration.ofSeconds(30));
			assertThat(context.getBean("dbLockAdvisor", DbLockAdvisor.class).getOrder()).isEqualTo(properties.getOrder());
			DbLockAdvisor transactionMode = context.getBean("dbLockTransactionModeAdvisor", DbLockAdvisor.class);
			assertThat(transactionMode.isTransactionMode()).isTrue();
			assertThat(transactionMode.getOrder()).isEqualTo(properties.getTransactionModeOrder());
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class)).isZero();
			assertThat(jdbc.queryForList("SELECT \"version\" FROM \"db_lock_schema_history\" WHERE \"success\"", String.class))
				.contains("1");
		});
	}

	@Test
	void backsOffForUserBeans() {
		this.contextRunner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasSingleBean(DbLockTemplate.class).hasSingleBean(LockRepository.class);
			assertThat(context.getBean(DbLockTemplate.class)).isSameAs(context.getBean(UserBeans.class).template);
			assertThat(context.getBean(LockRepository.class)).isSameAs(context.getBean(UserBeans.class).repository);
		});
	}

	@Test
	void aJdbcRepositoryOfTheApplicationsOwnServesTheConnectionModesAndTheLockLog() {
		this.contextRunner.withUserConfiguration(UserJdbcRepository.class)
			.withPropertyValues("db-lock.history.enabled=true", "db-lock.history.flush-interval=1h",
					"db-lock.recovery.interval=1h", "db-lock.reaper.enabled=false")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockRepository.class);
				UserJdbcRepository user = context.getBean(UserJdbcRepository.class);
				assertThat(context.getBean(LockRepository.class)).isSameAs(user.repository);
				int before = user.connections.get();
				context.getBean(ConnectionLockRepository.class).namedLocksUnavailable();
				assertThat(user.connections.get()).isEqualTo(before + 1);
				context.getBean(LockHistoryRepository.class).deleteOlderThan(java.time.Instant.EPOCH, 1);
				assertThat(user.connections.get()).isEqualTo(before + 2);
				context.getBean(DbLockTemplate.class).acquire("user:1", null, null).close();
				assertThat(user.connections.get()).isGreaterThan(before + 2);
			});
	}

	@Test
	void theRepositoriesShareOneOwnerOfTheLockConnections() {
		this.contextRunner.withPropertyValues("db-lock.history.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(LockConnections.class);
			assertThat(context.getBean(JdbcLockRepository.class).connections())
				.isSameAs(context.getBean(LockConnections.class));
		});
	}

	@Test
	void isDisabledByProperty() {
		this.contextRunner.withPropertyValues("db-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DbLockTemplate.class)
				.doesNotHaveBean(DbLockAdvisor.class)
				.doesNotHaveBean(DbLockSchemaMigration.class));
	}

	@Test
	void needsSpringJdbc() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(JdbcTemplate.class))
			.run((context) -> assertThat(context).doesNotHaveBean(DbLockTemplate.class));
	}

	@Test
	void needsADataSource() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DbLockAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DbLockTemplate.class));
	}

	@Test
	void propertiesBind() {
		this.contextRunner
			.withPropertyValues("db-lock.table-name=app_locks", "db-lock.key-prefix=billing", "db-lock.default-wait=250ms",
					"db-lock.default-lease=1m", "db-lock.order=42", "db-lock.dialect=h2", "db-lock.backoff.initial=1ms",
					"db-lock.backoff.max=20ms")
			.withUserConfiguration(Locked.class)
			.run((context) -> {
				DbLockProperties properties = context.getBean(DbLockProperties.class);
				assertThat(properties.getDefaultWait()).isEqualTo(Duration.ofMillis(250));
				assertThat(properties.getDefaultLease()).isEqualTo(Duration.ofMinutes(1));
				assertThat(properties.getDialect()).isEqualTo(Database.H2);
				assertThat(properties.getBackoff().getInitial()).isEqualTo(Duration.ofMillis(1));
				assertThat(properties.getBackoff().getMax()).isEqualTo(Duration.ofMillis(20));
				assertThat(context.getBean("dbLockAdvisor", DbLockAdvisor.class).getOrder()).isEqualTo(42);
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				List<String> keys = context.getBean(LockedService.class).keysWhileLocked(jdbc, 42L);
				assertThat(keys).containsExactly("billing:order:42");
				try (LockHandle handle = context.getBean(DbLockTemplate.class).acquire("x", null, null)) {
					assertThat(handle.key()).isEqualTo("billing:x");
					assertThat(jdbc.queryForList("SELECT lock_key FROM app_locks", String.class)).contains("billing:x")
						.doesNotContain("x");
				}
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM \"app_locks_schema_history\"", Integer.class))
					.isPositive();
			});
	}

	@Test
	void aReleaseDeletesTheRowBeforeItReturns() {
		this.contextRunner.run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			for (int i = 0; i < 20; i++) {
				template.acquire("order:" + i, null, null).close();
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class)).isZero();
			}
		});
	}

	@Test
	void aWatchdogIntervalNotShorterThanTheLeaseFailsStartUp() {
		this.contextRunner.withPropertyValues("db-lock.watchdog.interval=30s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("db-lock.watchdog.interval=30s is not shorter than db-lock.default-lease (30s)");
		});
	}

	@Test
	void theLocalTurnBinds() {
		this.contextRunner.withPropertyValues("db-lock.local-turn=50ms")
			.run((context) -> assertThat(context.getBean(DbLockProperties.class).getLocalTurn())
				.isEqualTo(Duration.ofMillis(50)));
	}

	@Test
	void theDialectCanBeChosen() {
		this.contextRunner.withPropertyValues("db-lock.dialect=mysql", "db-lock.schema.migrate=false")
			.run((context) -> assertThat(context.getBean(SqlDialect.class)).isInstanceOf(MySqlDialect.class));
	}

	@Test
	void migrationCanBeTurnedOff() {
		this.contextRunner.withPropertyValues("db-lock.schema.migrate=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DbLockSchemaMigration.class).hasSingleBean(DbLockTemplate.class);
			assertThat(context.getBean(JdbcTemplate.class)
				.queryForObject("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE LOWER(TABLE_NAME) = 'db_lock'",
						Integer.class))
				.isZero();
		});
	}

	@Test
	void leavesTheApplicationsOwnFlywayHistoryAlone() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
			.withPropertyValues("spring.flyway.locations=classpath:db/app-migration")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				assertThat(jdbc.queryForList("SELECT \"script\" FROM \"flyway_schema_history\" WHERE \"type\" = 'SQL'", String.class))
					.containsExactly("V1__app_orders.sql");
				assertThat(jdbc.queryForList("SELECT \"script\" FROM \"db_lock_schema_history\" WHERE \"version\" = '1'",
						String.class))
					.containsExactly("V1__create_lock_table.sql");
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM app_order", Integer.class)).isZero();
			});
	}

	@Test
	void anInvalidTableNameFailsStartUp() {
		this.contextRunner.withPropertyValues("db-lock.table-name=locks; DROP TABLE x")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("Invalid db-lock table name"));
	}

	@Test
	void anInvalidKeyPrefixFailsStartUp() {
		this.contextRunner.withPropertyValues("db-lock.key-prefix=a b")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("Invalid db-lock key prefix"));
	}

	@Test
	void aKeyThatDoesNotParseFailsStartUpNamingTheMethod() {
		this.contextRunner.withUserConfiguration(BadKey.class)
			.run((context) -> assertThat(dbLockFailure(context)).hasMessageContaining("BadKeyService.pay(long)")
				.hasMessageContaining("key \"#orderId +\" is not a valid SpEL expression"));
	}

	@Test
	void aMethodReturningAFutureFailsStartUpUnlessItIsAsync() {
		this.contextRunner.withUserConfiguration(FutureLock.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("FutureService.start()")
				.hasMessageContaining("returns CompletableFuture")
				.hasMessageContaining("@Async"));
		this.contextRunner.withUserConfiguration(AsyncFutureLock.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void theLockLogAndTheRecoveryJobAreOffUnlessAskedFor() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(LockHistory.class)
			.doesNotHaveBean(LockRecovery.class)
			.doesNotHaveBean(LockHistoryRepository.class));
		this.contextRunner.withPropertyValues("db-lock.recovery.max-hold=10m")
			.run((context) -> assertThat(context).doesNotHaveBean(LockHistory.class).hasSingleBean(LockRecovery.class));
	}

	@Test
	void theLockLogRecordsEveryHoldAndIsWrittenWhenTheContextCloses() {
		AtomicReference<String> url = new AtomicReference<>();
		this.contextRunner.withPropertyValues("db-lock.history.enabled=true", "db-lock.history.flush-interval=1h")
			.run((context) -> {
				assertThat(context).hasSingleBean(LockHistory.class).hasSingleBean(LockRecovery.class);
				url.set(((com.zaxxer.hikari.HikariDataSource) context.getBean(DataSource.class)).getJdbcUrl());
				DbLockTemplate template = context.getBean(DbLockTemplate.class);
				template.acquire("order:1", null, null).close();
				template.acquire("order:2", null, null).close();
			});
		// an hour's flush interval: the rows were written when the context closed
		JdbcTemplate afterwards = new JdbcTemplate(new SimpleDriverDataSource(new org.h2.Driver(), url.get(), "sa", ""));
		assertThat(afterwards.queryForList("SELECT lock_key, outcome FROM db_lock_history ORDER BY id"))
			.extracting((row) -> row.get("LOCK_KEY") + "=" + row.get("OUTCOME"))
			.containsExactly("order:1=released", "order:2=released");
	}

	@Test
	void closingTheContextReleasesTheLocksStillHeldAndReportsThemLost() {
		AtomicReference<String> url = new AtomicReference<>();
		AtomicReference<LockHandle> held = new AtomicReference<>();
		this.contextRunner.withPropertyValues("db-lock.shutdown.grace-period=0s")
			.run((context) -> {
				url.set(((com.zaxxer.hikari.HikariDataSource) context.getBean(DataSource.class)).getJdbcUrl());
				held.set(context.getBean(DbLockTemplate.class).acquire("held-at-close", null, null));
				assertThat(context.getBean(JdbcTemplate.class).queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class))
					.isEqualTo(1);
			});
		// the runner closed the context: the lock's row is gone, and its handle says it was lost
		JdbcTemplate afterwards = new JdbcTemplate(new SimpleDriverDataSource(new org.h2.Driver(), url.get(), "sa", ""));
		assertThat(afterwards.queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class)).isZero();
		assertThat(held.get().isHeld()).isFalse();
		assertThat(held.get().lostSince()).isPresent();
		held.get().close();
	}

	@Test
	void aPoolOfItsOwnIsCopiedFromTheApplicationsAndClosedWithIt() {
		AtomicReference<DataSource> own = new AtomicReference<>();
		this.contextRunner.withPropertyValues("db-lock.pool.size=2").run((context) -> {
			assertThat(context).hasSingleBean(DbLockConnectionPool.class).hasSingleBean(DataSource.class);
			own.set(context.getBean(DbLockConnectionPool.class).dataSource());
			assertThat(((com.zaxxer.hikari.HikariDataSource) own.get()).getMaximumPoolSize()).isEqualTo(2);
			try (LockHandle handle = context.getBean(DbLockTemplate.class).acquire("own-pool", null, null)) {
				assertThat(handle.isHeld()).isTrue();
			}
		});
		assertThat(((com.zaxxer.hikari.HikariDataSource) own.get()).isClosed()).isTrue();
	}

	@Test
	void propertiesOutOfRangeFailStartUpNamingThePropertyAsWrittenWithAnAnalysis() {
		for (String[] bad : new String[][] { { "db-lock.default-wait=-5s", "db-lock.default-wait=-5s must not be negative" },
				{ "db-lock.reaper.interval=0s", "db-lock.reaper.interval=0s must be positive" },
				{ "db-lock.reaper.batch-size=0", "db-lock.reaper.batch-size=0 must be at least 1" },
				{ "db-lock.backoff.max=1ms", "db-lock.backoff.max=1ms is shorter than db-lock.backoff.initial (5ms)" },
				{ "db-lock.pool.size=0", "db-lock.pool.size=0 must be at least 1" },
				{ "db-lock.history.retention=0d", "db-lock.history.retention=0d must be positive" },
				{ "db-lock.history.flush-interval=-1ms", "db-lock.history.flush-interval=-1ms must be positive" },
				{ "db-lock.recovery.max-hold=0s", "db-lock.recovery.max-hold=0s must be positive" },
				{ "db-lock.recovery.interval=0s", "db-lock.recovery.interval=0s must be positive" } }) {
			this.contextRunner.withPropertyValues(bad[0]).run((context) -> {
				Throwable failure = context.getStartupFailure();
				assertThat(failure).rootCause().isInstanceOf(DbLockConfigurationException.class).hasMessageContaining(bad[1]);
				FailureAnalysis analysis = new DbLockFailureAnalyzer().analyze(failure);
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription()).contains(bad[1]);
				assertThat(analysis.getAction()).isNotBlank();
			});
		}
	}

	@Test
	void aDialectThatDoesNotMatchTheDatabaseFailsStartUp() {
		TestDatabase.Connection mariadb = TestDatabase.MARIADB.connection();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + mariadb.url(), "spring.datasource.username=" + mariadb.user(),
					"spring.datasource.password=" + mariadb.password(), "db-lock.dialect=postgresql")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(DbLockConfigurationException.class)
				.hasMessageContaining("db-lock.dialect=postgresql does not match the database, which is mariadb"));
	}

	@Test
	void aServerWhoseAutoIncLockModeOrdersTokensIsNotWarnedOf(CapturedOutput output) {
		TestDatabase.Connection mariadb = TestDatabase.MARIADB.connection();
		String mode;
		try (com.zaxxer.hikari.HikariDataSource dataSource = TestDatabase.MARIADB.dataSource(1)) {
			mode = new org.springframework.jdbc.core.JdbcTemplate(dataSource)
				.queryForObject("SELECT @@GLOBAL.innodb_autoinc_lock_mode", String.class);
		}
		org.junit.jupiter.api.Assumptions.assumeFalse("2".equals(mode), "the shared server has innodb_autoinc_lock_mode=2");
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + mariadb.url(), "spring.datasource.username=" + mariadb.user(),
					"spring.datasource.password=" + mariadb.password())
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output.getAll()).doesNotContain("innodb_autoinc_lock_mode");
	}

	@Test
	void aUrlWhoseDriverFailsOverInsideAStatementIsWarnedOfAtStartUp(CapturedOutput output) {
		TestDatabase.Connection mariadb = TestDatabase.MARIADB.connection();
		String loadBalanced = mariadb.url().replace("jdbc:mariadb://", "jdbc:mariadb:loadbalance://");
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.username=" + mariadb.user(),
					"spring.datasource.password=" + mariadb.password());
		String separator = loadBalanced.contains("?") ? "&" : "?";
		runner.withPropertyValues("spring.datasource.url=" + loadBalanced + separator + DriverFailoverCheck.RECOMMENDED)
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output.getAll()).doesNotContain("fails over inside a statement");
		runner.withPropertyValues("spring.datasource.url=" + loadBalanced).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output.getAll()).contains("WARN")
				.contains("db-lock's JDBC URL fails over inside a statement (MariaDB Connector/J loadbalance)")
				.contains(DriverFailoverCheck.RECOMMENDED);
		});
	}

	@Test
	void withoutFlywaysModuleForTheDatabaseStartUpSaysWhichToAdd() {
		TestDatabase.Connection mariadb = TestDatabase.MARIADB.connection();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.flywaydb.database.mysql"))
			.withPropertyValues("spring.datasource.url=" + mariadb.url(), "spring.datasource.username=" + mariadb.user(),
					"spring.datasource.password=" + mariadb.password())
			.run((context) -> {
				assertThat(context).getFailure()
					.rootCause()
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("needs Flyway's module for that database");
				assertThat(((DbLockConfigurationException) NestedExceptionUtils
					.getMostSpecificCause(context.getStartupFailure())).getAction())
					.contains("org.flywaydb:flyway-mysql");
			});
	}

	@Test
	void withTwoDataSourcesAndNoneNamedStartUpSaysWhichPropertyToSet() {
		this.contextRunner.withUserConfiguration(TwoDataSources.class).run((context) -> assertThat(context).getFailure()
			.rootCause()
			.isInstanceOf(DbLockConfigurationException.class)
			.hasMessageContaining("there are 2 DataSource beans [first, second] and none is primary"));
	}

	@Test
	void withTwoDataSourcesDbLockUsesTheOneNamed() {
		this.contextRunner.withUserConfiguration(TwoDataSources.class)
			.withPropertyValues("db-lock.data-source=second")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockEngine.class);
				try (LockHandle handle = context.getBean(DbLockTemplate.class).acquire("named", null, null)) {
					JdbcTemplate second = new JdbcTemplate(context.getBean("second", DataSource.class));
					assertThat(second.queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class)).isEqualTo(1);
				}
			});
	}

	@Test
	void dbLockMethodsWithNoDataSourceFailStartUpRatherThanRunUnlocked() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DbLockAutoConfiguration.class,
					DbLockGuardAutoConfiguration.class))
			.withUserConfiguration(Locked.class)
			.run((context) -> assertThat(context).getFailure()
				.isInstanceOf(DbLockConfigurationException.class)
				.hasMessageContaining("@DbLock methods [LockedService.")
				.hasMessageContaining("there is no DataSource bean"));
	}

	@Test
	void aShutdownGracePeriodThatIsNegativeFailsStartUp() {
		this.contextRunner.withPropertyValues("db-lock.shutdown.grace-period=-1s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("db-lock.shutdown.grace-period"));
	}

	@Test
	void aStatementTimeoutAsLongAsTheRenewalMarginFailsStartUp() {
		this.contextRunner.withPropertyValues("db-lock.default-lease=3s", "db-lock.statement-timeout=2s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("db-lock.statement-timeout=2s is not shorter than the renewal margin"));
	}

	@Test
	void aStatementTimeoutBelowOneMillisecondFailsStartUp() {
		this.contextRunner.withPropertyValues("db-lock.statement-timeout=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("db-lock.statement-timeout"));
	}

	@Test
	void aKeyNamingAParameterTheMethodDoesNotHaveFailsStartUpListingTheRealOnes() {
		this.contextRunner.withUserConfiguration(MisspelledKey.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("MisspelledKeyService.pay(long, String)")
				.hasMessageContaining("refers to #orderID, which is not a parameter of the method")
				.hasMessageContaining("its parameters are #orderId, #currency"));
	}

	@Test
	void aNegativeWaitFailsStartUp() {
		this.contextRunner.withUserConfiguration(BadWait.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("BadWaitService.pay()")
				.hasMessageContaining("waitMs"));
	}

	@Test
	void aZeroLeaseFailsStartUp() {
		this.contextRunner.withUserConfiguration(BadLease.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("BadLeaseService.pay()")
				.hasMessageContaining("leaseMs"));
	}

	@Test
	void aMethodSpringCannotProxyIsReportedAtStartUp(CapturedOutput output) {
		this.contextRunner.withUserConfiguration(Unproxyable.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("@DbLock on UnproxyableService.pay(long) has no effect");
		});
	}

	@Test
	void aTransactionAdvisorOutsideTheLockIsReportedAtStartUp(CapturedOutput output) {
		this.contextRunner.withPropertyValues("db-lock.order=" + Integer.MAX_VALUE).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("@Transactional (order " + Integer.MAX_VALUE + ") runs outside @DbLock");
		});
	}

	@Test
	void theDefaultOrderRunsTheLockOutsideTransactions(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("runs outside @DbLock");
		});
	}

	@Test
	void keysAreEvaluatedWithSpringExpressions() {
		this.contextRunner.withUserConfiguration(Locked.class).run((context) -> {
			LockedService locked = context.getBean(LockedService.class);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			assertThat(locked.keysWhileLocked(jdbc, 7L)).containsExactly("order:7");
			assertThat(locked.byIndex(jdbc, 8L)).containsExactly("order:8");
			assertThat(locked.byProperty(jdbc, new Order(9L))).containsExactly("order:9");
			assertThat(locked.byBean(jdbc)).containsExactly("order:bean-10");
		});
	}

	@Test
	void aKeyThatIsNullBlankOrTooLongIsRejectedNamingTheMethod() {
		this.contextRunner.withUserConfiguration(Locked.class).run((context) -> {
			LockedService locked = context.getBean(LockedService.class);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> locked.keysWhileLocked(jdbc, null))
				.withMessageContaining("LockedService.keysWhileLocked(JdbcTemplate, Long)")
				.withMessageContaining("evaluated to null");
			assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> locked.byText(jdbc, "  "))
				.withMessageContaining("evaluated to a blank string");
			assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> locked.byText(jdbc, "x".repeat(300)))
				.withMessageContaining("LockedService.byText(JdbcTemplate, String)")
				.withMessageContaining("at most 255");
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM db_lock", Integer.class)).isZero();
		});
	}

	private static Throwable dbLockFailure(AssertableApplicationContext context) {
		Throwable failure = context.getStartupFailure();
		while (failure != null && !(failure instanceof DbLockException)) {
			failure = failure.getCause();
		}
		assertThat(failure).as("a DbLockException causing the start-up failure").isNotNull();
		return failure;
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		final LockRepository repository = new NoLockRepository();

		final DbLockTemplate template = new DbLockTemplate(
				new LockEngine(this.repository, io.github.dblock.engine.LockEngineSettings
					.of(new io.github.dblock.engine.Backoff(Duration.ofMillis(1), Duration.ofMillis(2)))),
				"", Duration.ZERO, Duration.ofSeconds(1));

		@Bean
		LockRepository userRepository() {
			return this.repository;
		}

		@Bean
		DbLockTemplate userTemplate() {
			return this.template;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserJdbcRepository {

		final AtomicInteger connections = new AtomicInteger();

		@org.jspecify.annotations.Nullable JdbcLockRepository repository;

		@Bean
		JdbcLockRepository userLockRepository(DataSource dataSource, SqlDialect dialect) {
			DataSource counting = new DelegatingDataSource(dataSource) {

				@Override
				public java.sql.Connection getConnection() throws java.sql.SQLException {
					UserJdbcRepository.this.connections.incrementAndGet();
					return super.getConnection();
				}

			};
			this.repository = new JdbcLockRepository(counting, dialect, Duration.ofSeconds(3));
			return this.repository;
		}

	}

	static class NoLockRepository implements LockRepository {

		@Override
		public java.util.Optional<io.github.dblock.jdbc.Lease> tryAcquire(String key, String owner, Duration lease) {
			return java.util.Optional.empty();
		}

		@Override
		public boolean release(io.github.dblock.jdbc.Lease lease, Duration minimumHold) {
			return false;
		}

		@Override
		public boolean cede(io.github.dblock.jdbc.Lease lease, Duration wantedWithin) {
			return false;
		}

		@Override
		public java.util.Optional<java.time.Instant> renew(io.github.dblock.jdbc.Lease lease, Duration duration) {
			return java.util.Optional.empty();
		}

		@Override
		public int deleteExpired(int limit) {
			return 0;
		}

		@Override
		public int maxKeyLength() {
			return 10;
		}

	}

	record Order(Long id) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Locked {

		@Bean
		LockedService lockedService() {
			return new LockedService();
		}

		@Bean
		Ids ids() {
			return new Ids();
		}

	}

	static class Ids {

		public String next() {
			return "bean-10";
		}

	}

	static class LockedService {

		@DbLock(name = "order", key = "#orderId")
		public List<String> keysWhileLocked(JdbcTemplate jdbc, Long orderId) {
			return keys(jdbc);
		}

		@DbLock(name = "order", key = "#p1")
		public List<String> byIndex(JdbcTemplate jdbc, Long orderId) {
			return keys(jdbc);
		}

		@DbLock(name = "order", key = "#order.id")
		public List<String> byProperty(JdbcTemplate jdbc, Order order) {
			return keys(jdbc);
		}

		@DbLock(name = "order", key = "@ids.next()")
		public List<String> byBean(JdbcTemplate jdbc) {
			return keys(jdbc);
		}

		@DbLock(name = "order", key = "#text")
		public List<String> byText(JdbcTemplate jdbc, String text) {
			return keys(jdbc);
		}

		/** The row of the lock this thread holds (rows of locks released a moment ago may remain). */
		private static List<String> keys(JdbcTemplate jdbc) {
			String key = DbLockContext.current().orElseThrow().key();
			return jdbc.queryForList("SELECT lock_key FROM " + currentTable(jdbc) + " WHERE lock_key = ?", String.class,
					key);
		}

		private static String currentTable(JdbcTemplate jdbc) {
			Integer custom = jdbc.queryForObject(
					"SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE LOWER(TABLE_NAME) = 'app_locks'", Integer.class);
			return (custom != null && custom > 0) ? "app_locks" : "db_lock";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadKey {

		@Bean
		BadKeyService badKeyService() {
			return new BadKeyService();
		}

	}

	static class BadKeyService {

		@DbLock(key = "#orderId +")
		public void pay(long orderId) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadWait {

		@Bean
		BadWaitService badWaitService() {
			return new BadWaitService();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FutureLock {

		@Bean
		FutureService futureService() {
			return new FutureService();
		}

	}

	static class FutureService {

		@DbLock
		public java.util.concurrent.CompletableFuture<String> start() {
			return java.util.concurrent.CompletableFuture.supplyAsync(() -> "started");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AsyncFutureLock {

		@Bean
		AsyncFutureService asyncFutureService() {
			return new AsyncFutureService();
		}

	}

	static class AsyncFutureService {

		@DbLock
		@org.springframework.scheduling.annotation.Async
		public java.util.concurrent.CompletableFuture<String> start() {
			return java.util.concurrent.CompletableFuture.completedFuture("done under the lock");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoDataSources {

		@Bean
		DataSource first() {
			return new org.springframework.jdbc.datasource.DriverManagerDataSource(
					"jdbc:h2:mem:first" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1", "sa", "");
		}

		@Bean
		DataSource second() {
			return new org.springframework.jdbc.datasource.DriverManagerDataSource(
					"jdbc:h2:mem:second" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1", "sa", "");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class MisspelledKey {

		@Bean
		MisspelledKeyService misspelledKeyService() {
			return new MisspelledKeyService();
		}

	}

	static class MisspelledKeyService {

		@DbLock(key = "#orderID + ':' + #currency")
		public void pay(long orderId, String currency) {
		}

	}

	static class BadWaitService {

		@DbLock(waitMs = -5)
		public void pay() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadLease {

		@Bean
		BadLeaseService badLeaseService() {
			return new BadLeaseService();
		}

	}

	static class BadLeaseService {

		@DbLock(leaseMs = 0)
		public void pay() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Unproxyable {

		@Bean
		UnproxyableService unproxyableService() {
			return new UnproxyableService();
		}

	}

	static class UnproxyableService {

		@DbLock(key = "#orderId")
		public final void pay(long orderId) {
		}

		@DbLock
		public void other() {
		}

	}

}
