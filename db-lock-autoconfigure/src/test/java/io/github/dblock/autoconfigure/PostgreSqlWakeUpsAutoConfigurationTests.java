package io.github.dblock.autoconfigure;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code db-lock.wake-ups.enabled} on PostgreSQL: the repository's feed, and db-lock's own
 * pool's one connection more for it. (On H2, {@code DbLockAutoConfigurationTests} finds the
 * own pool at the size asked.)
 */
class PostgreSqlWakeUpsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + TestDatabase.POSTGRESQL.connection().url(),
				"spring.datasource.username=" + TestDatabase.POSTGRESQL.connection().user(),
				"spring.datasource.password=" + TestDatabase.POSTGRESQL.connection().password(),
				"spring.datasource.hikari.maximum-pool-size=3");

	@Test
	void onByDefaultWithOneConnectionMoreInDbLocksOwnPool() {
		this.contextRunner.withPropertyValues("db-lock.pool.size=2").run((context) -> {
			assertThat(context.getBean(LockRepository.class).releaseFeed()).isPresent();
			assertThat(((HikariDataSource) context.getBean(DbLockConnectionPool.class).dataSource()).getMaximumPoolSize())
				.isEqualTo(3);
		});
	}

	@Test
	void offNoFeedAndThePoolAtTheSizeAsked() {
		this.contextRunner.withPropertyValues("db-lock.pool.size=2", "db-lock.wake-ups.enabled=false").run((context) -> {
			assertThat(context.getBean(LockRepository.class).releaseFeed()).isEmpty();
			assertThat(((HikariDataSource) context.getBean(DbLockConnectionPool.class).dataSource()).getMaximumPoolSize())
				.isEqualTo(2);
		});
	}

}
