package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.util.Arrays;

import javax.sql.DataSource;

import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.aop.DbLockAdvisor;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.DbLockObservationConvention;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.CommitGuard;
import io.github.dblock.jdbc.ConnectionLockRepository;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockHistoryRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockConnections;
import io.github.dblock.jdbc.LockHistoryRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.dialect.Database;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.maintenance.LockHistory;
import io.github.dblock.maintenance.LockReaper;
import io.github.dblock.maintenance.LockRecovery;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Auto-configuration of db-lock: the dialect, the lock table's migration, the repository,
 * the engine, {@link DbLockTemplate} and the advisor behind {@code @DbLock}.
 *
 * @since 0.1.0
 */
// after the transaction's: the transaction mode's advisor is registered after (and so runs inside) @Transactional's
@AutoConfiguration(after = { DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class },
		afterName = "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration")
@ConditionalOnClass(JdbcTemplate.class)
@ConditionalOnBean(DataSource.class)
@ConditionalOnBooleanProperty(name = "db-lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbLockProperties.class)
@Import({ DatabaseInitializationDependencyConfigurer.class, DbLockAutoConfiguration.AutoProxyRegistrar.class })
public final class DbLockAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DbLockAutoConfiguration.class);


	/**
	 * The data source of the lock table: {@code db-lock.data-source} if set, else the only
	 * or primary one.
	 */
	@Bean
	LockDataSource dbLockDataSource(ObjectProvider<DataSource> dataSources, ListableBeanFactory beanFactory,
			DbLockProperties properties, Environment environment) {
		new DbLockPropertiesCheck(properties, environment).check();
		String[] names = beanFactory.getBeanNamesForType(DataSource.class);
		String name = properties.getDataSource();
		if (name != null) {
			if (!Arrays.asList(names).contains(name)) {
				throw new DbLockConfigurationException("db-lock.data-source=" + name + " names no DataSource bean; the "
						+ "DataSource beans are " + Arrays.toString(names) + ".",
						"Set db-lock.data-source to the name of one of them.");
			}
			return new LockDataSource(beanFactory.getBean(name, DataSource.class));
		}
		DataSource unique = dataSources.getIfUnique();
		if (unique == null) {
			throw new DbLockConfigurationException("db-lock does not know which DataSource holds its lock table: there "
					+ "are " + names.length + " DataSource beans " + Arrays.toString(names) + " and none is primary.",
					"Set db-lock.data-source to the bean name of the one db-lock should use (every instance of the "
							+ "application must use the same database), or mark one of them @Primary.");
		}
		return new LockDataSource(unique);
	}

	@Bean
	@ConditionalOnMissingBean
	SqlDialect dbLockSqlDialect(LockDataSource lockDataSource, DbLockProperties properties) {
		SqlDialect dialect = dialect(lockDataSource.dataSource(), properties);
		DbLockServerCheck.check(lockDataSource.dataSource(), dialect, properties.statementTimeout());
		return dialect;
	}

	private static SqlDialect dialect(DataSource dataSource, DbLockProperties properties) {
		Database named = properties.getDialect();
		if (named == null) {
			return SqlDialects.detect(dataSource, properties.getTableName());
		}
		Database detected;
		try {
			detected = SqlDialects.database(dataSource);
		}
		catch (IllegalStateException ex) {
			// a database db-lock does not recognise, named on purpose: the user's choice
			return named.dialect(properties.getTableName());
		}
		if (!detected.runs(named)) {
			throw new DbLockConfigurationException("db-lock.dialect=" + named.id() + " does not match the database, "
					+ "which is " + detected.id() + ": its migration and statements would fail.",
					"Remove db-lock.dialect to let db-lock detect the database, or set it to " + detected.id() + ".");
		}
		return named.dialect(properties.getTableName());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "db-lock.schema.migrate", matchIfMissing = true)
	DbLockSchemaMigration dbLockSchemaMigration(LockDataSource dataSource, SqlDialect dialect) {
		return new DbLockSchemaMigration(dataSource.dataSource(), dialect);
	}

	/**
	 * The owner of the lock statements' connections: db-lock's own pool
	 * ({@code db-lock.pool.size}) if it has one, else the lock table's data source.
	 */
	@Bean
	@ConditionalOnMissingBean
	LockConnections dbLockConnections(LockDataSource lockDataSource, SqlDialect dialect, DbLockProperties properties,
			ObjectProvider<DbLockConnectionPool> pool) {
		DbLockConnectionPool own = pool.getIfAvailable();
		LockConnections connections = new LockConnections((own != null) ? own.dataSource() : lockDataSource.dataSource(),
				dialect, properties.statementTimeout());
		if (!connections.boundsPoolWait()) {
			logger.info("db-lock: its DataSource is a " + lockDataSource.dataSource().getClass().getName()
					+ ", not a HikariDataSource: a lock call's wait for a pool connection is that pool's own, outside "
					+ "the bound of its wait plus db-lock.statement-timeout (see docs/guarantees.md, \"A stalled database "
					+ "does not hold a caller\"). Give db-lock a HikariDataSource (or db-lock.pool.size) to bound it.");
		}
		return connections;
	}

	@Bean
	@ConditionalOnMissingBean
	LockRepository dbLockRepository(LockConnections connections, DbLockProperties properties) {
		JdbcLockRepository repository = new JdbcLockRepository(connections);
		repository.setWakeUps(properties.getWakeUps().isEnabled());
		return repository;
	}

	/**
	 * The connections of the lock repository if it is db-lock's JDBC one (the application's
	 * own included), else db-lock's.
	 */
	private static LockConnections connectionsOf(LockRepository repository, ObjectProvider<LockConnections> connections) {
		return (repository instanceof JdbcLockRepository jdbc) ? jdbc.connections() : connections.getObject();
	}

	/** The transaction and named modes' storage, on the lease repository's connections and settings. */
	@Bean
	@ConditionalOnMissingBean
	ConnectionLockRepository dbLockConnectionLockRepository(LockRepository repository,
			ObjectProvider<LockConnections> connections, LockDataSource lockDataSource) {
		return new JdbcConnectionLockRepository(connectionsOf(repository, connections), lockDataSource.dataSource());
	}

	@Bean
	@ConditionalOnMissingBean
	LockEngine dbLockEngine(LockRepository repository, ObjectProvider<ConnectionLockRepository> connectionLocks,
			DbLockProperties properties, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<DbLockObservationConvention> observationConvention) {
		DbLockProperties.Backoff backoff = properties.getBackoff();
		Duration interval = properties.getWatchdog().getInterval();
		LockEngine engine = new LockEngine(repository, connectionLocks.getIfAvailable(),
				new LockEngineSettings(new Backoff(backoff.getInitial(), backoff.getMax()), interval,
						properties.getLocalTurn()));
		observationRegistry.ifAvailable(engine::setObservationRegistry);
		observationConvention.ifAvailable(engine::setObservationConvention);
		return engine;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnClass(name = "com.zaxxer.hikari.HikariDataSource")
	@ConditionalOnProperty(name = "db-lock.pool.size")
	DbLockConnectionPool dbLockConnectionPool(LockDataSource dataSource, SqlDialect dialect,
			DbLockProperties properties) {
		DbLockProperties.Pool pool = properties.getPool();
		// on PostgreSQL, the wake-ups' connection comes on top of the lock statements'
		int wakeUps = (properties.getWakeUps().isEnabled() && dialect.database() == Database.POSTGRESQL) ? 1 : 0;
		return new DbLockConnectionPool(dataSource.dataSource(), pool.getSize() + wakeUps, pool.getConnectionTimeout());
	}

	@Bean
	DbLockShutdown dbLockShutdown(LockEngine engine, DbLockProperties properties) {
		return new DbLockShutdown(engine, properties.getShutdown().getGracePeriod());
	}

	@Bean
	@ConditionalOnMissingBean
	DbLockTemplate dbLockTemplate(LockEngine engine, DbLockProperties properties) {
		return new DbLockTemplate(engine, properties.getKeyPrefix(), properties.getDefaultWait(),
				properties.getDefaultLease(), properties.getOnLostLease());
	}

	@Bean
	@ConditionalOnClass(name = "org.springframework.transaction.TransactionExecutionListener")
	@ConditionalOnProperty(name = "db-lock.on-lost-lease", havingValue = "rollback")
	DbLockRollbackOnLostLease dbLockRollbackOnLostLease() {
		return new DbLockRollbackOnLostLease();
	}

	/** The commit guard, added to the context's transaction managers. */
	@Bean
	@ConditionalOnClass(name = "org.springframework.transaction.ConfigurableTransactionManager")
	@ConditionalOnBooleanProperty(name = "db-lock.guard-commits", matchIfMissing = true)
	DbLockCommitGuard dbLockCommitGuard(LockRepository repository, ObjectProvider<LockConnections> connections,
			LockDataSource lockDataSource, ListableBeanFactory beanFactory) {
		return new DbLockCommitGuard(new CommitGuard(connectionsOf(repository, connections)), lockDataSource.dataSource(),
				beanFactory);
	}

	/** The lock log's storage, where the log or the recovery job is asked for. */
	@Bean
	@ConditionalOnMissingBean
	@Conditional(HistoryOrRecovery.class)
	LockHistoryRepository dbLockHistoryRepository(LockRepository repository,
			ObjectProvider<LockConnections> connections) {
		return new JdbcLockHistoryRepository(connectionsOf(repository, connections));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty("db-lock.history.enabled")
	LockHistory dbLockHistory(LockHistoryRepository repository, LockEngine engine, DbLockProperties properties) {
		LockHistory history = new LockHistory(repository, properties.getHistory().getFlushInterval(),
				engine.scheduler());
		engine.addListener(history);
		return history;
	}

	@Bean
	@ConditionalOnMissingBean
	@Conditional(HistoryOrRecovery.class)
	LockRecovery dbLockRecovery(LockHistoryRepository repository, LockEngine engine, DbLockProperties properties) {
		DbLockProperties.History history = properties.getHistory();
		return new LockRecovery(engine, repository, properties.getRecovery().getMaxHold(),
				history.isEnabled() ? history.getRetention() : null, properties.getRecovery().getInterval());
	}

	/** The lock log on, or a longest hold set. */
	static final class HistoryOrRecovery extends AnyNestedCondition {

		HistoryOrRecovery() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnBooleanProperty("db-lock.history.enabled")
		static final class History {

		}

		@ConditionalOnProperty("db-lock.recovery.max-hold")
		static final class MaxHold {

		}

	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "db-lock.reaper.enabled", matchIfMissing = true)
	LockReaper dbLockReaper(LockRepository repository, LockEngine engine, DbLockProperties properties) {
		DbLockProperties.Reaper reaper = properties.getReaper();
		return new LockReaper(repository, reaper.getBatchSize(), reaper.getInterval(), engine.scheduler());
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

	/**
	 * The advisor of the transaction mode: it must run inside {@code @Transactional}, whose
	 * advisor has the lowest precedence unless the application says otherwise; this one has
	 * it too and is registered after it (this auto-configuration runs after the
	 * transaction's), and {@link DbLockModeCheck} fails start-up if a bean's advisors are
	 * ordered the other way.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean(name = "dbLockTransactionModeAdvisor")
	static DbLockAdvisor dbLockTransactionModeAdvisor(ObjectProvider<DbLockTemplate> template, BeanFactory beanFactory,
			Environment environment) {
		int order = environment.getProperty("db-lock.transaction-mode-order", Integer.class,
				new DbLockProperties().getTransactionModeOrder());
		return new DbLockAdvisor(template::getObject, beanFactory, order, true);
	}

	@Bean
	@ConditionalOnClass(name = "org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor")
	static DbLockOrderCheck dbLockOrderCheck(ListableBeanFactory beanFactory) {
		return new DbLockOrderCheck(beanFactory);
	}

	@Bean
	static DbLockModeCheck dbLockModeCheck(ConfigurableListableBeanFactory beanFactory) {
		return new DbLockModeCheck(beanFactory);
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

	/** The data source db-lock uses, chosen among the application's. */
	record LockDataSource(DataSource dataSource) {
	}

}
