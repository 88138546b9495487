package io.github.dblock.autoconfigure;

import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
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
import org.springframework.transaction.annotation.Transactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code db-lock.on-lost-lease=rollback}: a method whose lease ends while it runs cannot
 * commit what it wrote; with {@code throw} it commits and then reports the loss.
 */
class DbLockRollbackOnLostLeaseTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class,
				AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:lost" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context))
		.withUserConfiguration(Outliving.class);

	@Test
	void withRollbackTheWritesOfAMethodThatOutlivedItsLeaseAreRolledBack() {
		this.contextRunner.withPropertyValues("db-lock.on-lost-lease=rollback").run((context) -> {
			assertThat(context).hasSingleBean(DbLockRollbackOnLostLease.class);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			jdbc.execute("CREATE TABLE outlived (id INT PRIMARY KEY)");
			OutlivingService service = context.getBean(OutlivingService.class);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> service.writeThenOutliveLease(1))
				.withMessageContaining("rolled back");
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM outlived", Integer.class)).isZero();
			// a method that finishes within its lease commits
			service.write(2);
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM outlived", Integer.class)).isOne();
		});
	}

	/** Without the commit guard (which would refuse the commit: the lease has ended in the database too). */
	@Test
	void withThrowTheWritesCommitAndTheLossIsReportedAfter() {
		this.contextRunner.withPropertyValues("db-lock.guard-commits=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DbLockRollbackOnLostLease.class);
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			jdbc.execute("CREATE TABLE outlived (id INT PRIMARY KEY)");
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(() -> context.getBean(OutlivingService.class).writeThenOutliveLease(1));
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM outlived", Integer.class)).isOne();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Outliving {

		@Bean
		OutlivingService outlivingService(JdbcTemplate jdbc) {
			return new OutlivingService(jdbc);
		}

	}

	static class OutlivingService {

		private final JdbcTemplate jdbc;

		OutlivingService(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@DbLock(name = "outlived", leaseMs = 300)
		@Transactional
		public void writeThenOutliveLease(int id) {
			this.jdbc.update("INSERT INTO outlived (id) VALUES (?)", id);
			LockHandle lock = DbLockContext.current().orElseThrow();
			// the fixed lease ends on the local clock while the method still runs
			while (lock.isHeld()) {
				Thread.onSpinWait();
			}
		}

		@DbLock(name = "outlived")
		@Transactional
		public void write(int id) {
			this.jdbc.update("INSERT INTO outlived (id) VALUES (?)", id);
		}

	}

}
