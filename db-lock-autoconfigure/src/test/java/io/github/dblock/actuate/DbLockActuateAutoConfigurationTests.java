package io.github.dblock.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.endpoint.DbLockEndpointAutoConfiguration;
import io.github.dblock.autoconfigure.health.DbLockHealthAutoConfiguration;
import io.github.dblock.autoconfigure.metrics.DbLockMetricsAutoConfiguration;
import io.github.dblock.engine.DbLockObservationContext;
import io.github.dblock.engine.DbLockObservationConvention;
import io.github.dblock.engine.DefaultDbLockObservationConvention;
import io.github.dblock.maintenance.LockHistory;
import io.github.dblock.maintenance.LockReaper;
import io.github.dblock.jdbc.LockRepository;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.awaitility.Awaitility;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Tests for db-lock's meters, health indicator and actuator endpoint, on an embedded H2
 * per test.
 */
class DbLockActuateAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class,
				DbLockAutoConfiguration.class, MetricsAutoConfiguration.class, DbLockMetricsAutoConfiguration.class,
				DbLockHealthAutoConfiguration.class, DbLockEndpointAutoConfiguration.class))
		.withUserConfiguration(Registry.class)
		.withPropertyValues("management.endpoints.web.exposure.include=dblock", "db-lock.key-prefix=app")
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:actuate" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void metersCountAnAcquisitionAHoldAndATimeoutTaggedByName() {
		this.contextRunner.run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			try (LockHandle handle = template.acquire("order:42", Duration.ZERO, null)) {
				assertThat(registry.get(DbLockMetrics.HELD_COUNT).gauge().value()).isEqualTo(1);
			}
			// another owner holds order:43: a zero wait times out
			context.getBean(LockRepository.class).tryAcquire("app:order:43", "someone-else", Duration.ofMinutes(1));
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> template.acquire("order:43", Duration.ZERO, null));
			Timer acquired = registry.get(DbLockMetrics.ACQUIRE)
				.tags("name", "order", "mode", "lease", "outcome", "acquired")
				.timer();
			assertThat(acquired.count()).isEqualTo(1);
			Timer timedOut = registry.get(DbLockMetrics.ACQUIRE)
				.tags("name", "order", "mode", "lease", "outcome", "timed_out")
				.timer();
			assertThat(timedOut.count()).isEqualTo(1);
			assertThat(registry.get(DbLockMetrics.HELD).tags("name", "order", "mode", "lease").timer().count())
				.isEqualTo(1);
			assertThat(registry.get(DbLockMetrics.HELD_COUNT).gauge().value()).isZero();
			assertThat(registry.get(DbLockMetrics.WAITING).gauge().value()).isZero();
			// one tag value per kind of lock, never one per order id
			assertThat(registry.find(DbLockMetrics.ACQUIRE).timers()).extracting((timer) -> timer.getId().getTag("name"))
				.containsOnly("order");
		});
	}

	@Test
	void nameTagsAreBoundedAndLostAndReapedLocksAreCounted() {
		this.contextRunner.withPropertyValues("db-lock.metrics.max-names=2").run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			for (String key : new String[] { "a:1", "b:1", "c:1", "d:1" }) {
				template.acquire(key, Duration.ZERO, null).close();
			}
			assertThat(registry.find(DbLockMetrics.ACQUIRE).timers()).extracting((timer) -> timer.getId().getTag("name"))
				.containsExactlyInAnyOrder("a", "b", "other");
			assertThat(registry.get(DbLockMetrics.ACQUIRE).tags("name", "other").timer().count()).isEqualTo(2);
			// a row deleted under its holder: the release finds it gone, the lock was lost
			LockHandle handle = template.acquire("order:1", Duration.ZERO, null);
			context.getBean(JdbcTemplate.class).update("DELETE FROM db_lock");
			handle.close();
			assertThat(registry.get(DbLockMetrics.LOST).counter().count()).isEqualTo(1);
			// an expired row of another owner: the reaper deletes it
			context.getBean(LockRepository.class).tryAcquire("app:order:2", "gone", Duration.ofMillis(1));
			context.getBean(JdbcTemplate.class).update("UPDATE db_lock SET expires_at = TIMESTAMPADD(HOUR, -1, expires_at)");
			assertThat(context.getBean(LockReaper.class).reap()).isEqualTo(1);
			assertThat(registry.get(DbLockMetrics.REAPED).counter().count()).isEqualTo(1);
		});
	}

	@Test
	void metricsBackOffWhenDisabledOrWithoutMicrometer() {
		this.contextRunner.withPropertyValues("db-lock.metrics.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DbLockMetrics.class));
		this.contextRunner.withClassLoader(new FilteredClassLoader("io.micrometer.core"))
			.withConfiguration(AutoConfigurations.of(DbLockMetricsAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(DbLockMetrics.class));
	}

	@Test
	void healthIsUpWithTheDialectTableClockOffsetAndWatchdogLag() {
		this.contextRunner.run((context) -> {
			Health health = context.getBean("dbLockHealthIndicator", HealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("dialect", "h2").containsEntry("table", "db_lock");
			// H2 runs in this JVM and reads its clock: the offset is the rounding of a timestamp
			Duration offset = Duration.parse((String) health.getDetails().get("clockOffset"));
			assertThat(offset.abs()).isLessThan(Duration.ofSeconds(1));
			// nothing held, nothing due
			assertThat(health.getDetails()).containsEntry("watchdogLag", "PT0S");
			try (LockHandle held = context.getBean(DbLockTemplate.class).acquire("order:1", Duration.ZERO, null)) {
				Health whileHeld = context.getBean("dbLockHealthIndicator", HealthIndicator.class).health();
				assertThat(Duration.parse((String) whileHeld.getDetails().get("watchdogLag"))).isGreaterThanOrEqualTo(Duration.ZERO);
			}
		});
	}

	@Test
	void contentionRetriesAreCounted() {
		this.contextRunner.run((context) -> {
			context.getBean(LockRepository.class).tryAcquire("app:order:7", "someone-else", Duration.ofMinutes(1));
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(
					() -> context.getBean(DbLockTemplate.class).acquire("order:7", Duration.ofMillis(300), null));
			assertThat(context.getBean(MeterRegistry.class)
				.get(DbLockMetrics.CONTENDED)
				.tags("name", "order", "mode", "lease")
				.counter()
				.count()).isPositive();
		});
	}

	@Test
	void everyAcquisitionCallIsObservedWithItsModeAndOutcome() {
		this.contextRunner.withUserConfiguration(Observations.class).run((context) -> {
			List<DbLockObservationContext> observed = context.getBean(Observations.class).stopped;
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			template.acquire("order:1", Duration.ZERO, null).close();
			context.getBean(LockRepository.class).tryAcquire("app:order:2", "someone-else", Duration.ofMinutes(1));
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> template.acquire("order:2", Duration.ZERO, null));
			assertThat(observed).extracting(DbLockObservationContext::getKey, DbLockObservationContext::getOutcome)
				.containsExactly(tuple("app:order:1", "acquired"), tuple("app:order:2", "timed_out"));
			DbLockObservationContext first = observed.get(0);
			assertThat(first.getName()).isEqualTo(DefaultDbLockObservationConvention.NAME);
			assertThat(first.getContextualName()).isEqualTo("db-lock acquire");
			assertThat(first.getLowCardinalityKeyValues()).extracting(KeyValue::getKey, KeyValue::getValue)
				.containsExactlyInAnyOrder(tuple("db.lock.mode", "lease"), tuple("db.lock.outcome", "acquired"));
			assertThat(first.getHighCardinalityKeyValues()).extracting(KeyValue::getKey, KeyValue::getValue)
				.containsExactly(tuple("db.lock.key", "app:order:1"));
		});
	}

	@Test
	void anObservationConventionBeanReplacesTheDefault() {
		this.contextRunner.withUserConfiguration(Observations.class)
			.withBean(DbLockObservationConvention.class, () -> new DefaultDbLockObservationConvention() {
				@Override
				public String getName() {
					return "app.lock";
				}
			})
			.run((context) -> {
				context.getBean(DbLockTemplate.class).acquire("order:1", Duration.ZERO, null).close();
				assertThat(context.getBean(Observations.class).stopped).extracting(DbLockObservationContext::getName)
					.containsExactly("app.lock");
			});
	}

	@Test
	void healthIsContributedAsDbLock() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class))
			.run((context) -> assertThat(context.getBean(HealthContributorRegistry.class).getContributor("dbLock"))
				.isInstanceOf(DbLockHealthIndicator.class));
	}

	@Test
	void healthIsDownWithoutTheLockTable() {
		this.contextRunner.withPropertyValues("db-lock.schema.migrate=false").run((context) -> {
			Health health = context.getBean("dbLockHealthIndicator", HealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsEntry("table", "db_lock").containsKey("error");
		});
	}

	@Test
	void healthBacksOffWhenDisabledOrWithoutBootHealth() {
		this.contextRunner.withPropertyValues("management.health.db-lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DbLockHealthIndicator.class));
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("dbLockHealthIndicator"));
	}

	@Test
	void endpointListsAHeldLockAndForceReleasesItOnlyWithItsOwnerAndToken() {
		this.contextRunner.run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			DbLockEndpoint endpoint = context.getBean(DbLockEndpoint.class);
			try (LockHandle handle = template.acquire("order:7", Duration.ZERO, null)) {
				DbLockEndpoint.LocksReport report = endpoint.locks();
				assertThat(report.truncated()).isFalse();
				assertThat(report.rows()).singleElement().satisfies((row) -> {
					assertThat(row.key()).isEqualTo("app:order:7");
					assertThat(row.expiresAt()).isAfter(row.acquiredAt());
				});
				assertThat(report.heldHere()).singleElement().satisfies((held) -> {
					assertThat(held.key()).isEqualTo("app:order:7");
					assertThat(held.mode()).isEqualTo("lease");
					assertThat(held.thread()).isEqualTo(Thread.currentThread().getName());
				});
				DbLockEndpoint.Row row = report.rows().get(0);
				assertThat(endpoint.release(row.key(), row.owner(), row.token() + 1)).containsEntry("released", false);
				assertThat(endpoint.release(row.key(), "someone-else", row.token())).containsEntry("released", false);
				assertThat(endpoint.locks().rows()).hasSize(1);
				assertThat(endpoint.release(row.key(), row.owner(), row.token())).containsEntry("released", true);
				assertThat(endpoint.locks().rows()).isEmpty();
			}
		});
	}

	@Test
	void endpointListsTheLocksOfEveryModeHeldInTheDatabaseWithTheirMode() {
		this.contextRunner.run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			DbLockEndpoint endpoint = context.getBean(DbLockEndpoint.class);
			try (LockHandle lease = template.acquire("mode:lease", Duration.ZERO, null);
					LockHandle read = template.acquire(DbLockMode.READ, "mode:read", Duration.ZERO);
					LockHandle write = template.acquire(DbLockMode.WRITE, "mode:write", Duration.ZERO);
					LockHandle fair = template.acquire(DbLockMode.FAIR, "mode:fair", Duration.ZERO)) {
				List<DbLockEndpoint.Row> rows = endpoint.locks().rows();
				assertThat(rows).extracting(DbLockEndpoint.Row::key, DbLockEndpoint.Row::mode)
					.containsExactly(tuple("app:mode:fair", "fair"), tuple("app:mode:lease", "lease"),
							tuple("app:mode:read", "read"), tuple("app:mode:write", "write"));
				// a fair lock's token is its ticket; the others' handles number hand-ons below the row's
				assertThat(rows.get(0).token()).isEqualTo(fair.fencingToken());
				assertThat(rows).allSatisfy((row) -> assertThat(row.owner()).isNotBlank());
				assertThat(rows).allSatisfy((row) -> assertThat(row.expiresAt()).isAfter(Instant.now().minusSeconds(60)));
				// the fair queue does not keep when a ticket came to hold its key
				assertThat(rows).extracting(DbLockEndpoint.Row::acquiredAt).first().isNull();
				assertThat(rows.subList(1, rows.size())).extracting(DbLockEndpoint.Row::acquiredAt).doesNotContainNull();
			}
		});
		this.contextRunner.withPropertyValues("db-lock.endpoint.max-rows=2").run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			try (LockHandle lease = template.acquire("mode:lease", Duration.ZERO, null);
					LockHandle read = template.acquire(DbLockMode.READ, "mode:read", Duration.ZERO);
					LockHandle write = template.acquire(DbLockMode.WRITE, "mode:write", Duration.ZERO)) {
				DbLockEndpoint.LocksReport report = context.getBean(DbLockEndpoint.class).locks();
				assertThat(report.rows()).extracting(DbLockEndpoint.Row::mode).containsExactly("lease", "read");
				assertThat(report.truncated()).isTrue();
			}
		});
	}

	@Test
	void endpointListsTheLockLogsLastHoldsWhenTheLogIsOn() {
		this.contextRunner.withPropertyValues("db-lock.history.enabled=true").run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			DbLockEndpoint endpoint = context.getBean(DbLockEndpoint.class);
			assertThat(endpoint.locks().log()).isEmpty();
			long released;
			try (LockHandle handle = template.acquire("logged:1", Duration.ZERO, null)) {
				released = handle.fencingToken();
			}
			try (LockHandle handle = template.acquire(DbLockMode.WRITE, "logged:2", Duration.ZERO)) {
				context.getBean(LockHistory.class).flush();
				assertThat(endpoint.locks().log())
					.extracting(DbLockEndpoint.LogEntry::key, DbLockEndpoint.LogEntry::mode, DbLockEndpoint.LogEntry::token,
							DbLockEndpoint.LogEntry::outcome)
					.containsExactly(tuple("app:logged:2", "write", handle.fencingToken(), null),
							tuple("app:logged:1", "lease", released, "released"));
				assertThat(endpoint.locks().log()).first().satisfies((entry) -> assertThat(entry.endedAt()).isNull());
				assertThat(endpoint.locks().log()).last()
					.satisfies((entry) -> assertThat(entry.endedAt()).isAfterOrEqualTo(entry.acquiredAt()));
			}
		});
		// the recovery job alone uses the log's table, but the log is off
		this.contextRunner.withPropertyValues("db-lock.recovery.max-hold=1h")
			.run((context) -> assertThat(context.getBean(DbLockEndpoint.class).locks().log()).isNull());
		this.contextRunner.run((context) -> assertThat(context.getBean(DbLockEndpoint.class).locks().log()).isNull());
	}

	@Test
	void endpointListsTheKeysThreadsOfThisJvmWaitFor() {
		this.contextRunner.run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			DbLockEndpoint endpoint = context.getBean(DbLockEndpoint.class);
			assertThat(endpoint.locks().waitingHere()).isEmpty();
			List<Thread> waiters = new CopyOnWriteArrayList<>();
			try (LockHandle handle = template.acquire("order:8", Duration.ZERO, null)) {
				for (int i = 0; i < 2; i++) {
					Thread waiter = new Thread(() -> template.acquire("order:8", Duration.ofMinutes(1), null).close());
					waiter.start();
					waiters.add(waiter);
				}
				// both wait in this JVM, behind the thread that holds the key
				Awaitility.await()
					.atMost(Duration.ofSeconds(30))
					.until(() -> endpoint.locks().waitingHere(),
							(waiting) -> waiting.equals(List.of(new DbLockEndpoint.Waiting("app:order:8", "lease", 2))));
				assertThat(endpoint.locks().heldHere()).extracting(DbLockEndpoint.Held::key).containsExactly("app:order:8");
			}
			for (Thread waiter : waiters) {
				waiter.join(Duration.ofMinutes(1).toMillis());
				assertThat(waiter.isAlive()).isFalse();
			}
			assertThat(endpoint.locks().waitingHere()).isEmpty();
		});
	}

	@Test
	void endpointListsDbLocksOwnMigrations() {
		this.contextRunner.run((context) -> {
			List<DbLockEndpoint.Migration> migrations = context.getBean(DbLockEndpoint.class).locks().migrations();
			assertThat(migrations).extracting(DbLockEndpoint.Migration::version).contains("1", "2", "3");
			assertThat(migrations).extracting(DbLockEndpoint.Migration::state).containsOnly("SUCCESS");
			assertThat(migrations).allSatisfy((migration) -> assertThat(migration.installedOn()).isNotNull());
		});
	}

	@Test
	void endpointListsTheMigrationsAsFlywayDoesAsTheHistoryChanges() {
		this.contextRunner.run((context) -> {
			DbLockEndpoint endpoint = context.getBean(DbLockEndpoint.class);
			DataSource dataSource = context.getBean(DataSource.class);
			assertThat(endpoint.locks().migrations()).containsExactlyInAnyOrderElementsOf(flywayInfo(dataSource));
			assertThat(endpoint.locks().migrations()).extracting(DbLockEndpoint.Migration::version)
				.containsExactly("1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
			assertThat(endpoint.locks().migrations()).first()
				.extracting(DbLockEndpoint.Migration::description)
				.isEqualTo("create lock table");
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			// the last migration undone: pending
			jdbc.update("DELETE FROM \"db_lock_schema_history\" WHERE \"version\" = '10'");
			assertThat(endpoint.locks().migrations()).last()
				.extracting(DbLockEndpoint.Migration::state, DbLockEndpoint.Migration::installedOn)
				.containsExactly("PENDING", null);
			assertThat(endpoint.locks().migrations()).containsExactlyInAnyOrderElementsOf(flywayInfo(dataSource));
			// a migration of a later db-lock, applied by another instance: the one left out is ignored
			jdbc.update("INSERT INTO \"db_lock_schema_history\" (\"installed_rank\", \"version\", \"description\", "
					+ "\"type\", \"script\", \"checksum\", \"installed_by\", \"execution_time\", \"success\") "
					+ "VALUES (99, '99', 'from a later version', 'SQL', 'V99__from_a_later_version.sql', 0, 'test', 1, TRUE)");
			assertThat(endpoint.locks().migrations()).extracting(DbLockEndpoint.Migration::state)
				.containsExactly("SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS",
						"SUCCESS", "IGNORED", "FUTURE_SUCCESS");
			assertThat(endpoint.locks().migrations()).containsExactlyInAnyOrderElementsOf(flywayInfo(dataSource));
		});
	}

	private static List<DbLockEndpoint.Migration> flywayInfo(DataSource dataSource) {
		return Arrays.stream(Flyway.configure()
			.dataSource(dataSource)
			.locations("classpath:db/db-lock/h2")
			.table("db_lock_schema_history")
			.placeholders(Map.of("table", "db_lock"))
			.load()
			.info()
			.all())
			.map((info) -> new DbLockEndpoint.Migration(String.valueOf(info.getVersion()), info.getDescription(),
					info.getState().name(), (info.getInstalledOn() != null) ? info.getInstalledOn().toInstant() : null))
			.toList();
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void readingTheEndpointLogsNoFlywayWarning(CapturedOutput output) {
		String verified = "newer than the version Flyway has been verified with";
		this.contextRunner.run((context) -> {
			int started = output.length();
			DbLockEndpoint endpoint = context.getBean(DbLockEndpoint.class);
			assertThat(endpoint.locks().migrations()).isNotEmpty();
			assertThat(endpoint.locks().migrations()).isNotEmpty();
			String reads = output.subSequence(started, output.length()).toString();
			assertThat(reads).doesNotContain(verified);
			assertThat(output.toString().split(verified, -1)).hasSizeLessThanOrEqualTo(2);
		});
	}

	@Test
	void endpointListsAtMostItsLimit() {
		this.contextRunner.withPropertyValues("db-lock.endpoint.max-rows=2").run((context) -> {
			LockRepository repository = context.getBean(LockRepository.class);
			for (int i = 0; i < 3; i++) {
				repository.tryAcquire("k" + i, "owner" + i, Duration.ofMinutes(1));
			}
			DbLockEndpoint.LocksReport report = context.getBean(DbLockEndpoint.class).locks();
			assertThat(report.rows()).extracting(DbLockEndpoint.Row::key).containsExactly("k0", "k1");
			assertThat(report.truncated()).isTrue();
		});
	}

	@Test
	void endpointBacksOffWhenNotAvailableOrWithoutTheActuator() {
		// upper case: the runner's environment has no lenient enum conversion, an application's has
		this.contextRunner.withPropertyValues("management.endpoint.dblock.access=NONE")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DbLockEndpoint.class));
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=health")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DbLockEndpoint.class));
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("dbLockEndpoint"));
	}

	static class Observations implements ObservationHandler<DbLockObservationContext> {

		final List<DbLockObservationContext> stopped = new CopyOnWriteArrayList<>();

		@Bean
		ObservationRegistry observationRegistry() {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(this);
			return registry;
		}

		@Override
		public void onStop(DbLockObservationContext context) {
			this.stopped.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return context instanceof DbLockObservationContext;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Registry {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

}
