package io.github.dblock.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import io.github.dblock.DbLockTemplate;
import io.github.dblock.aop.DbLockAdvisor;
import io.github.dblock.core.Backoff;
import io.github.dblock.core.LockEngine;
import io.github.dblock.core.LockEngineSettings;
import io.github.dblock.core.LockReaper;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.SqlDialect;
import io.github.dblock.jdbc.SqlDialects;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Auto-configuration of db-lock: the dialect, the lock table's migration, the repository,
 * the engine, {@link DbLockTemplate} and the advisor behind {@code @DbLock}.
 */
@AutoConfiguration(after = { DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class })
@ConditionalOnClass(JdbcTemplate.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "db-lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbLockProperties.class)
@Import({ DatabaseInitializationDependencyConfigurer.class, DbLockAutoConfiguration.AutoProxyRegistrar.class })
public final class DbLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	SqlDialect dbLockSqlDialect(DataSource dataSource, DbLockProperties properties) {
		DbLockProperties.Dialect dialect = properties.getDialect();
		return (dialect != null) ? SqlDialects.named(dialect.name(), properties.getTableName())
				: SqlDialects.detect(dataSource, properties.getTableName());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "db-lock.schema.migrate", matchIfMissing = true)
	DbLockSchemaMigration dbLockSchemaMigration(DataSource dataSource, SqlDialect dialect) {
		return new DbLockSchemaMigration(dataSource, dialect);
	}

	@Bean
	@ConditionalOnMissingBean
	LockRepository dbLockRepository(DataSource dataSource, SqlDialect dialect, DbLockProperties properties,
			ObjectProvider<DbLockConnectionPool> pool) {
		Duration statementTimeout = properties.getStatementTimeout();
		if (statementTimeout.toMillis() < 1) {
			throw new IllegalArgumentException(
					"db-lock.statement-timeout (" + statementTimeout + ") must be at least 1ms");
		}
		DbLockConnectionPool own = pool.getIfAvailable();
		return new JdbcLockRepository((own != null) ? own.dataSource() : dataSource, dialect, statementTimeout);
	}

	@Bean
	@ConditionalOnMissingBean
	LockEngine dbLockEngine(LockRepository repository, DbLockProperties properties) {
		DbLockProperties.Backoff backoff = properties.getBackoff();
		Duration interval = properties.getWatchdog().getInterval();
		if (interval != null && interval.compareTo(properties.getDefaultLease()) >= 0) {
			throw new IllegalArgumentException("db-lock.watchdog.interval (" + interval
					+ ") must be shorter than db-lock.default-lease (" + properties.getDefaultLease()
					+ "): a lease renewed no sooner than it ends lets another node take the lock");
		}
		Duration margin = properties.getDefaultLease()
			.minus((interval != null) ? interval : properties.getDefaultLease().dividedBy(3));
		if (properties.getStatementTimeout().compareTo(margin) >= 0) {
			throw new IllegalArgumentException("db-lock.statement-timeout (" + properties.getStatementTimeout()
					+ ") must be shorter than the renewal margin of the default lease (" + margin
					+ ": db-lock.default-lease minus the renewal interval): a renewal that hangs that long leaves "
					+ "no time to try again before the lease ends");
		}
		return new LockEngine(repository,
				new LockEngineSettings(new Backoff(backoff.getInitial(), backoff.getMax()), interval,
						properties.getLocalTurn()));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnClass(name = "com.zaxxer.hikari.HikariDataSource")
	@ConditionalOnProperty(name = "db-lock.pool.size")
	DbLockConnectionPool dbLockConnectionPool(DataSource dataSource, DbLockProperties properties) {
		DbLockProperties.Pool pool = properties.getPool();
		if (pool.getSize() < 1) {
			throw new IllegalArgumentException("db-lock.pool.size (" + pool.getSize()
					+ ") must be at least 1; leave it unset to share the application's pool");
		}
		return new DbLockConnectionPool(dataSource, pool.getSize(), pool.getConnectionTimeout());
	}

	@Bean
	DbLockShutdown dbLockShutdown(LockEngine engine, DbLockProperties properties) {
		Duration gracePeriod = properties.getShutdown().getGracePeriod();
		if (gracePeriod.isNegative()) {
			throw new IllegalArgumentException(
					"db-lock.shutdown.grace-period (" + gracePeriod + ") must not be negative");
		}
		return new DbLockShutdown(engine, gracePeriod);
	}

	@Bean
	@ConditionalOnMissingBean
	DbLockTemplate dbLockTemplate(LockEngine engine, DbLockProperties properties) {
		return new DbLockTemplate(engine, properties.getKeyPrefix(), properties.getDefaultWait(),
				properties.getDefaultLease(), properties.getOnLostLease());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "db-lock.reaper.enabled", matchIfMissing = true)
	LockReaper dbLockReaper(LockRepository repository, DbLockProperties properties) {
		LockReaper reaper = new LockReaper(repository, properties.getReaper().getBatchSize());
		reaper.start(properties.getReaper().getInterval());
		return reaper;
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static DbLockAdvisor dbLockAdvisor(ObjectProvider<DbLockTemplate> template, BeanFactory beanFactory,
			Environment environment) {
		// bound from the environment: advisors are created before configuration properties beans may be
		int order = environment.getProperty("db-lock.order", Integer.class, new DbLockProperties().getOrder());
		return new DbLockAdvisor(template::getObject, beanFactory, order);
	}

	@Bean
	@ConditionalOnClass(name = "org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor")
	static DbLockOrderCheck dbLockOrderCheck(ListableBeanFactory beanFactory) {
		return new DbLockOrderCheck(beanFactory);
	}

	/**
	 * Makes sure an auto-proxy creator applies the advisor, as
	 * {@code @EnableTransactionManagement} does; a no-op where one is registered already.
	 */
	static final class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
