package io.github.dblock.autoconfigure;

import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import io.github.dblock.DbLock;
import io.github.dblock.LockLostException;
import io.github.dblock.jdbc.dialect.H2Dialect;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.annotation.Transactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code db-lock.guard-commits}: on by default, added once to every transaction manager of
 * the context (Spring Boot's and the application's own), off with the property; a
 * {@code @DbLock @Transactional} method whose lock's row is gone at its commit is rolled
 * back.
 */
class DbLockCommitGuardTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class,
				AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:guard" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context))
		.withUserConfiguration(Guarded.class);

	@Test
	void theGuardIsOnByDefaultOnceOnBootsTransactionManager() {
		this.contextRunner.run((context) -> {
			DbLockCommitGuard guard = context.getBean(DbLockCommitGuard.class);
			DataSourceTransactionManager manager = context.getBean(DataSourceTransactionManager.class);
			assertThat(guard.guards(manager)).isTrue();
			assertThat(guard.addTo(manager)).isTrue();
			assertThat(manager.getTransactionExecutionListeners()).hasSize(1);
		});
	}

	@Test
	void theApplicationsOwnTransactionManagerIsGuardedToo() {
		this.contextRunner.withUserConfiguration(OwnTransactionManager.class).run((context) -> {
			DataSourceTransactionManager own = context.getBean("ownTransactionManager", DataSourceTransactionManager.class);
			assertThat(context.getBean(DbLockCommitGuard.class).guards(own)).isTrue();
			assertThat(own.getTransactionExecutionListeners()).hasSize(1);
		});
	}

	@Test
	void aMethodWhoseLockRowIsGoneAtItsCommitIsRolledBack() {
		this.contextRunner.run((context) -> {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			jdbc.execute("CREATE TABLE guarded (id INT PRIMARY KEY)");
			GuardedService service = context.getBean(GuardedService.class);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> service.writeThenLose(1))
				.withMessageContaining("db-lock.guard-commits");
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM guarded", Integer.class)).isZero();
			service.write(2);
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM guarded", Integer.class)).isOne();
		});
	}

	@Test
	void withTheGuardOffTheSameMethodCommits() {
		this.contextRunner.withPropertyValues("db-lock.guard-commits=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DbLockCommitGuard.class);
			assertThat(context.getBean(DataSourceTransactionManager.class).getTransactionExecutionListeners()).isEmpty();
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			jdbc.execute("CREATE TABLE guarded (id INT PRIMARY KEY)");
			try {
				context.getBean(GuardedService.class).writeThenLose(1);
			}
			catch (RuntimeException ex) {
				// the release finds its row gone: reported, after the commit
			}
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM guarded", Integer.class)).isOne();
		});
	}

	@Test
	void aDatabaseThatCannotTakeSharedRowLocksFailsTheStartNamingTheProperty() {
		this.contextRunner.withUserConfiguration(NoSharedLocks.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("db-lock.guard-commits=false");
		});
		this.contextRunner.withUserConfiguration(NoSharedLocks.class)
			.withPropertyValues("db-lock.guard-commits=false")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Configuration(proxyBeanMethods = false)
	static class Guarded {

		@Bean
		GuardedService guardedService(JdbcTemplate jdbc) {
			return new GuardedService(jdbc);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnTransactionManager {

		@Bean
		DataSourceTransactionManager ownTransactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoSharedLocks {

		@Bean
		SqlDialect dbLockSqlDialect() {
			return new H2Dialect("db_lock") {

				@Override
				public @Nullable String sharedRowLock() {
					return null;
				}

			};
		}

	}

	static class GuardedService {

		private final JdbcTemplate jdbc;

		GuardedService(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		/** Writes, then its lock's row is deleted (by another node's take-over, or the reaper after a stall). */
		@DbLock(name = "guarded")
		@Transactional
		public void writeThenLose(int id) {
			this.jdbc.update("INSERT INTO guarded (id) VALUES (?)", id);
			try (java.sql.Connection other = this.jdbc.getDataSource().getConnection()) {
				other.createStatement().executeUpdate("DELETE FROM db_lock WHERE lock_key = 'guarded'");
			}
			catch (java.sql.SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@DbLock(name = "guarded")
		@Transactional
		public void write(int id) {
			this.jdbc.update("INSERT INTO guarded (id) VALUES (?)", id);
		}

	}

}
