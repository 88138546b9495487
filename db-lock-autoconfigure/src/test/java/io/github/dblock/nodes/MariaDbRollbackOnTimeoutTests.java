package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLock;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.OwnMariaDb;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
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
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transaction mode on a MariaDB server of the test's own started with
 * {@code innodb_rollback_on_timeout=ON} (not settable at run time): a wait that runs out
 * rolls back the caller's whole transaction, which the mode must report, not retry, and
 * which start-up warns of where the mode is used.
 */
@ExtendWith(OutputCaptureExtension.class)
class MariaDbRollbackOnTimeoutTests {

	private static final String WARNING = "innodb_rollback_on_timeout=ON: a transaction-mode lock whose wait runs out "
			+ "rolls back the caller's whole transaction";

	@Test
	void startUpWarnsOfARollbackOnTimeoutServerWhereTransactionModeMethodsExist(CapturedOutput output)
			throws Exception {
		TestDatabase.Connection shared = TestDatabase.MARIADB.connection();
		try (OwnMariaDb server = OwnMariaDb.startWith("--innodb-rollback-on-timeout=ON")) {
			ApplicationContextRunner onServer = contextRunner(server.url(), server.user(), "");
			int before = warnings(output);
			onServer.withUserConfiguration(TransactionLocked.class).run((context) -> assertThat(context).hasNotFailed());
			int withMethods = warnings(output) - before;
			String logged = output.getAll();
			before = warnings(output);
			int infoBefore = mentions(output);
			onServer.run((context) -> assertThat(context).hasNotFailed());
			int withoutMethods = warnings(output) - before;
			// for the template's callers of the mode: an INFO
			int infoWithoutMethods = mentions(output) - infoBefore - withoutMethods;
			// the shared server has the default, OFF
			before = warnings(output);
			int mentionsBefore = mentions(output);
			contextRunner(shared.url(), shared.user(), shared.password()).withUserConfiguration(TransactionLocked.class)
				.run((context) -> assertThat(context).hasNotFailed());
			int onDefaultServer = warnings(output) - before;
			int mentionsOnDefaultServer = mentions(output) - mentionsBefore;
			System.out.println("MariaDbRollbackOnTimeoutTests start-up: WARN with transaction-mode methods="
					+ withMethods + ", WARN without them=" + withoutMethods + " (INFO " + infoWithoutMethods
					+ "), WARN on a server with the default="
					+ onDefaultServer + " (mentions " + mentionsOnDefaultServer + ")");
			assertThat(withMethods).isEqualTo(1);
			assertThat(logged).contains("@DbLock(mode = TRANSACTION) on [TransactionLockedService.pay]")
				.contains("the call fails with a DbLockException saying so, never retried");
			assertThat(withoutMethods).isZero();
			assertThat(infoWithoutMethods).isEqualTo(1);
			assertThat(onDefaultServer).isZero();
			assertThat(mentionsOnDefaultServer).isZero();
		}
	}

	private static ApplicationContextRunner contextRunner(String url, String user, String password) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					AopAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + url, "spring.datasource.username=" + user,
					"spring.datasource.password=" + password, "db-lock.table-name=" + TestDatabase.TABLE);
	}

	/** The WARN lines of the start-up check so far. */
	private static int warnings(CapturedOutput output) {
		return (int) output.getAll().lines().filter((line) -> line.contains(" WARN ") && line.contains(WARNING)).count();
	}

	/** The lines that mention the setting so far. */
	private static int mentions(CapturedOutput output) {
		return (int) output.getAll().lines().filter((line) -> line.contains("innodb_rollback_on_timeout=ON")).count();
	}

	@Test
	void aWaitThatRunsOutOnARollbackOnTimeoutServerEndsTheTransactionsLocks() throws Exception {
		try (OwnMariaDb server = OwnMariaDb.startWith("--innodb-rollback-on-timeout=ON");
				HikariDataSource dataSource = NodeSupport.dataSource(server.url(), server.user(), "", 6)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			assertThat(jdbc.queryForObject("SELECT @@innodb_rollback_on_timeout", Integer.class)).isEqualTo(1);
			new DbLockSchemaMigration(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE)).afterPropertiesSet();
			jdbc.execute("CREATE TABLE db_lock_test_writes (id INT PRIMARY KEY, written INT)");
			jdbc.update("INSERT INTO db_lock_test_writes VALUES (1, 0)");
			JdbcLockRepository leases = new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE));
			LockEngine engine = new LockEngine(leases, new JdbcConnectionLockRepository(leases.connections(), dataSource),
					LockEngineSettings.of(new io.github.dblock.engine.Backoff(Duration.ofMillis(2), Duration.ofMillis(50))));
			TransactionTemplate transactions = new TransactionTemplate(new JdbcTransactionManager(dataSource));
			CountDownLatch held = new CountDownLatch(1);
			CountDownLatch done = new CountDownLatch(1);
			CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> transactions.executeWithoutResult((s) -> {
				engine.acquire(new LockRequest("rot-2", Duration.ZERO, Duration.ofSeconds(30), true, Duration.ZERO,
						DbLockMode.TRANSACTION));
				held.countDown();
				try {
					done.await(1, TimeUnit.MINUTES);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}));
			assertThat(held.await(1, TimeUnit.MINUTES)).isTrue();
			int[] violations = new int[3];
			String[] failure = new String[1];
			try {
				transactions.executeWithoutResult((status) -> {
					LockHandle first = engine.acquire(new LockRequest("rot-1", Duration.ZERO, Duration.ofSeconds(30),
							true, Duration.ZERO, DbLockMode.TRANSACTION));
					jdbc.update("UPDATE db_lock_test_writes SET written = 1 WHERE id = 1");
					try {
						engine.acquire(new LockRequest("rot-2", Duration.ofMillis(1500), Duration.ofSeconds(30), true,
								Duration.ZERO, DbLockMode.TRANSACTION));
					}
					catch (DbLockException ex) {
						failure[0] = ex.getClass().getSimpleName() + ": " + ex.getMessage();
						boolean rolledBack = jdbc.queryForObject("SELECT written FROM db_lock_test_writes WHERE id = 1",
								Integer.class) == 0;
						if (rolledBack && first.isHeld()) {
							violations[0]++;
						}
						if (rolledBack && (ex instanceof LockAcquisitionException
								|| !String.valueOf(ex.getMessage()).contains("rolled back"))) {
							violations[1]++;
						}
						if (rolledBack && !rolledBack(engine)) {
							violations[2]++;
						}
					}
					status.setRollbackOnly();
				});
			}
			finally {
				done.countDown();
				holder.get(1, TimeUnit.MINUTES);
				engine.close();
			}
			System.out.println("MariaDbRollbackOnTimeoutTests: failure=" + failure[0] + " handleSaysHeldButRolledBack="
					+ violations[0] + " reportedAsATimeout=" + violations[1] + " lockedInsideRolledBack=" + violations[2]);
			assertThat(failure[0]).isNotNull();
			assertThat(violations).containsExactly(0, 0, 0);
		}
	}

	/** Whether a further lock in the current (rolled back) transaction is refused. */
	private static boolean rolledBack(LockEngine engine) {
		try {
			return engine.tryAcquire(new LockRequest("rot-3", Duration.ZERO, Duration.ofSeconds(30), true, Duration.ZERO,
					DbLockMode.TRANSACTION)).isEmpty();
		}
		catch (DbLockException ex) {
			return true;
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class TransactionLocked {

		@Bean
		TransactionLockedService transactionLockedService() {
			return new TransactionLockedService();
		}

	}

	static class TransactionLockedService {

		@Transactional
		@DbLock(mode = DbLockMode.TRANSACTION, name = "order", key = "#orderId", waitMs = 1000)
		public void pay(long orderId) {
		}

	}

}
