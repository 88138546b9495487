package io.github.dblock.nodes;

import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLock;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockConfigurationException;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.OwnMariaDb;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * On a node of a Galera cluster (a one-node cluster of the test's own, {@code wsrep_on=ON}),
 * the named, transaction and read/write modes are refused, at start-up for {@code @DbLock} methods and
 * at the call for the template, since each node gives its own named locks and row locks;
 * the lease mode works.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
class MariaDbGaleraModesTests {

	private OwnMariaDb server;

	@BeforeAll
	void startServer() throws Exception {
		this.server = OwnMariaDb.startGaleraNode();
	}

	@AfterAll
	void stopServer() throws Exception {
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void theEngineRefusesTheNamedAndTransactionModesAndTakesLeases() {
		try (HikariDataSource dataSource = NodeSupport.dataSource(this.server.url(), "root", "", 4)) {
			JdbcLockRepository leases = new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, "db_lock"));
			new DbLockSchemaMigration(dataSource, leases.dialect()).afterPropertiesSet();
			try (LockEngine engine = new LockEngine(leases, new JdbcConnectionLockRepository(leases.connections(), dataSource),
					LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
				assertThat(engine.unavailable(DbLockMode.NAMED)).hasValueSatisfying(
						(reason) -> assertThat(reason).contains("Galera cluster (wsrep_on=ON)", "GET_LOCK"));
				assertThat(engine.unavailable(DbLockMode.TRANSACTION)).hasValueSatisfying(
						(reason) -> assertThat(reason).contains("Galera cluster (wsrep_on=ON)", "lock rows on their own"));
				assertThatExceptionOfType(DbLockException.class)
					.isThrownBy(() -> engine.acquire(new LockRequest("galera", Duration.ZERO, Duration.ofSeconds(30),
							false, Duration.ZERO, DbLockMode.NAMED)))
					.withMessageContaining("wsrep_on=ON");
				assertThat(engine.unavailable(DbLockMode.READ)).hasValueSatisfying(
						(reason) -> assertThat(reason).contains("Galera cluster (wsrep_on=ON)", "does not certify"));
				assertThatExceptionOfType(DbLockException.class)
					.isThrownBy(() -> engine.acquire(new LockRequest("galera", Duration.ZERO, Duration.ofSeconds(30),
							false, Duration.ZERO, DbLockMode.READ)))
					.withMessageContaining("wsrep_on=ON");
				try (LockHandle lease = engine.acquire(LockRequest.of("galera", Duration.ZERO, Duration.ofSeconds(30)))) {
					assertThat(lease.isHeld()).isTrue();
				}
			}
		}
	}

	@Test
	void aNodeNotReadyForApplicationsIsAnAttemptThatDidNotAcquire() {
		try (HikariDataSource dataSource = NodeSupport.dataSource(this.server.url(), "root", "", 4);
				HikariDataSource admin = NodeSupport.dataSource(this.server.url(), "root", "", 1)) {
			JdbcLockRepository leases = new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, "db_lock"));
			new DbLockSchemaMigration(dataSource, leases.dialect()).afterPropertiesSet();
			JdbcTemplate adminJdbc = new JdbcTemplate(admin);
			try (LockEngine engine = new LockEngine(leases,
					LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
				// the node answers every statement with 1047, as a member still joining or desynced does
				adminJdbc.execute("SET GLOBAL wsrep_reject_queries = ALL");
				try {
					assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(
							() -> engine.acquire(LockRequest.of("not-ready", Duration.ofMillis(300), Duration.ofSeconds(30))));
				}
				finally {
					adminJdbc.execute("SET GLOBAL wsrep_reject_queries = NONE");
				}
				// the connections that met it were evicted from the pool; the next ones work
				try (LockHandle lease = engine.acquire(LockRequest.of("not-ready", Duration.ofSeconds(5), Duration.ofSeconds(30)))) {
					assertThat(lease.isHeld()).isTrue();
				}
			}
		}
	}

	@Test
	void sessionsThatDoNotWaitForCausalityFailStartUpWithTheFix() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + this.server.url(), "spring.datasource.username=root")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("wsrep_sync_wait=0")
					.hasMessageContaining("a release sent to another member than its acquisition can miss the lock's row");
			});
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + this.server.url(), "spring.datasource.username=root",
					"spring.datasource.hikari.connection-init-sql=SET SESSION wsrep_sync_wait=15")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void startUpWarnsThatTokensMayBeOutOfOrderWithAutoIncLockMode2(CapturedOutput output) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + this.server.url(), "spring.datasource.username=root",
					"spring.datasource.hikari.connection-init-sql=SET SESSION wsrep_sync_wait=15")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("innodb_autoinc_lock_mode=2");
	}

	@Test
	void aNamedLockMethodFailsStartUpOnTheCluster() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					AopAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + this.server.url() + "?sessionVariables=wsrep_sync_wait=15",
					"spring.datasource.username=root")
			.withUserConfiguration(NamedJob.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("@DbLock(mode = NAMED) on [NamedJobService.run] cannot work")
					.hasMessageContaining("Galera cluster");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class NamedJob {

		@Bean
		NamedJobService namedJobService() {
			return new NamedJobService();
		}

	}

	static class NamedJobService {

		@DbLock(mode = DbLockMode.NAMED)
		public void run() {
		}

	}

}
