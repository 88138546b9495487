package io.github.dblock.autoconfigure;

import java.util.Map;

import javax.sql.DataSource;

import io.github.dblock.jdbc.SqlDialect;
import org.flywaydb.core.Flyway;

import org.springframework.beans.factory.InitializingBean;

/**
 * Creates and upgrades the lock table with db-lock's own Flyway migrations
 * ({@code classpath:db/db-lock/<dialect>}), recorded in a history table of their own
 * ({@code <table>_schema_history}) so that the application's migrations and history are
 * untouched. Several instances starting at once are serialized by Flyway's own lock.
 */
public class DbLockSchemaMigration implements InitializingBean {

	private final DataSource dataSource;

	private final SqlDialect dialect;

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
	public void afterPropertiesSet() {
		Flyway.configure(DbLockSchemaMigration.class.getClassLoader())
			.dataSource(this.dataSource)
			.locations("classpath:db/db-lock/" + this.dialect.name())
			.table(this.dialect.table() + "_schema_history")
			.placeholders(Map.of("table", this.dialect.table()))
			// the application's own tables may already be there: start db-lock's history at 0
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.load()
			.migrate();
	}

}
