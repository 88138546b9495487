package io.github.dblock.autoconfigure;

import java.util.Map;

import javax.sql.DataSource;

import io.github.dblock.jdbc.dialect.Database;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;

import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.util.ClassUtils;

/**
 * Creates and upgrades the lock table with db-lock's own Flyway migrations
 * ({@link Database#migrationLocation()}), recorded in a history table of their own
 * ({@code <table>_schema_history}) so that the application's migrations and history are
 * untouched. Several instances starting at once are serialized by Flyway's own lock.
 *
 * @since 0.1.0
 */
public class DbLockSchemaMigration implements InitializingBean, BeanClassLoaderAware {

	private final DataSource dataSource;

	private final SqlDialect dialect;

	private ClassLoader classLoader = DbLockSchemaMigration.class.getClassLoader();

	/**
	 * Creates the migration.
	 * @param dataSource the application's data source
	 * @param dialect the dialect, naming the migrations' folder and the table
	 */
	public DbLockSchemaMigration(DataSource dataSource, SqlDialect dialect) {
		this.dataSource = dataSource;
		this.dialect = dialect;
	}

	@Override
	public void setBeanClassLoader(ClassLoader classLoader) {
		this.classLoader = classLoader;
	}

	@Override
	public void afterPropertiesSet() {
		checkFlywayModule();
		flyway().migrate();
	}

	/**
	 * db-lock's migrations and their state in its history table, for the {@code dblock}
	 * actuator endpoint. They are not shown by {@code /actuator/flyway}, which lists the
	 * context's {@link Flyway} beans: a bean of db-lock's would make Spring Boot's Flyway
	 * auto-configuration back off and leave the application's own migrations unrun.
	 * @return every migration, applied or pending, in version order
	 */
	public MigrationInfo[] migrations() {
		return flyway().info().all();
	}

	private Flyway flyway() {
		return Flyway.configure(DbLockSchemaMigration.class.getClassLoader())
			.dataSource(this.dataSource)
			.locations(this.dialect.database().migrationLocation())
			.table(this.dialect.table() + "_schema_history")
			.placeholders(Map.of("table", this.dialect.table()))
			// the application's own tables may already be there: start db-lock's history at 0
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.load();
	}

	/**
	 * Fails with what to add when Flyway's module for the database is missing: db-lock does
	 * not force the modules of every database on its users.
	 */
	private void checkFlywayModule() {
		Database database = this.dialect.database();
		String moduleClass = database.flywayModuleClass();
		if (moduleClass != null && !ClassUtils.isPresent(moduleClass, this.classLoader)) {
			throw new DbLockConfigurationException("db-lock's schema migration on " + database.id()
					+ " needs Flyway's module for that database, which is not on the class path.",
					"Add the dependency org.flywaydb:" + database.flywayModule() + " (its version comes from Spring Boot's "
							+ "dependency management), or set db-lock.schema.migrate=false and create the tables "
							+ "from db-lock's scripts yourself.");
		}
	}

}
