package io.github.dblock.jdbc.dialect;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * The databases db-lock has SQL for: for each, its name (the value of
 * {@code db-lock.dialect} and the folder of its migrations), its family, the Flyway module
 * its migrations need, how it is told from a connection's metadata, and its
 * {@link SqlDialect}. A new database is a constant here, its {@link SqlDialect} and its
 * folder of migrations under {@code db/db-lock/}.
 *
 * @since 0.1.0
 */
public enum Database {

	/**
	 * MariaDB 10.6 and later.
	 */
	MARIADB("mariadb", "mysql", "org.flywaydb.database.mysql.MySQLDatabaseType", "flyway-mysql", MariaDbDialect::new),

	/**
	 * MySQL 8.0 and later.
	 */
	MYSQL("mysql", "mysql", "org.flywaydb.database.mysql.MySQLDatabaseType", "flyway-mysql", MySqlDialect::new),

	/**
	 * PostgreSQL 14 and later.
	 */
	POSTGRESQL("postgresql", "postgresql", "org.flywaydb.database.postgresql.PostgreSQLDatabaseType",
			"flyway-database-postgresql", PostgreSqlDialect::new),

	/**
	 * H2 2.x, also in its MySQL and PostgreSQL compatibility modes.
	 */
	H2("h2", "h2", null, null, H2Dialect::new);

	private final String id;

	private final String family;

	private final @Nullable String flywayModuleClass;

	private final @Nullable String flywayModule;

	private final Function<String, SqlDialect> dialect;

	Database(String id, String family, @Nullable String flywayModuleClass, @Nullable String flywayModule,
			Function<String, SqlDialect> dialect) {
		this.id = id;
		this.family = family;
		this.flywayModuleClass = flywayModuleClass;
		this.flywayModule = flywayModule;
		this.dialect = dialect;
	}

	/**
	 * The database's name in lower case: the value of {@code db-lock.dialect} and the
	 * folder of its migrations under {@code db/db-lock/}.
	 * @return the name
	 */
	public String id() {
		return this.id;
	}

	/**
	 * The classpath location of the database's Flyway migrations.
	 * @return {@code classpath:db/db-lock/} followed by {@link #id()}
	 */
	public String migrationLocation() {
		return "classpath:db/db-lock/" + this.id;
	}

	/**
	 * A class of the Flyway module that the database's migrations need beside
	 * {@code flyway-core}, to tell whether it is on the class path.
	 * @return the class's name, or {@code null} if {@code flyway-core} alone suffices
	 */
	public @Nullable String flywayModuleClass() {
		return this.flywayModuleClass;
	}

	/**
	 * The artifact id (group {@code org.flywaydb}) of the Flyway module of
	 * {@link #flywayModuleClass()}.
	 * @return the artifact id, or {@code null} if {@code flyway-core} alone suffices
	 */
	public @Nullable String flywayModule() {
		return this.flywayModule;
	}

	/**
	 * Whether the statements of {@code named} run on this database: a database of the same
	 * family (MySQL's and MariaDB's SQL are one), or H2, which emulates the others in its
	 * compatibility modes.
	 * @param named the database whose statements would run here
	 * @return whether they run
	 */
	public boolean runs(Database named) {
		return this == H2 || this.family.equals(named.family);
	}

	/**
	 * The database's statements on a lock table.
	 * @param table the lock table's name
	 * @return a new dialect
	 * @throws IllegalArgumentException if the table name is not a plain identifier
	 */
	public SqlDialect dialect(String table) {
		return this.dialect.apply(table);
	}

	/**
	 * The database with a name.
	 * @param name the name, as {@link #id()} in any case
	 * @return the database
	 * @throws IllegalArgumentException for another name
	 */
	public static Database named(String name) {
		String id = name.toLowerCase(Locale.ROOT);
		for (Database database : values()) {
			if (database.id.equals(id)) {
				return database;
			}
		}
		throw new IllegalArgumentException("Unknown db-lock dialect '" + name + "': expected one of " + ids());
	}

	/**
	 * The database a connection's metadata describes: MariaDB apart from MySQL, also when
	 * reached through MySQL's driver (its version names it).
	 * @param metaData the connection's metadata
	 * @return the database
	 * @throws SQLException if the metadata cannot be read
	 * @throws IllegalStateException for a database db-lock does not support
	 */
	public static Database of(DatabaseMetaData metaData) throws SQLException {
		String product = metaData.getDatabaseProductName().toLowerCase(Locale.ROOT);
		String version = metaData.getDatabaseProductVersion().toLowerCase(Locale.ROOT);
		if (product.contains("mariadb") || version.contains("mariadb")) {
			return MARIADB;
		}
		if (product.contains("mysql")) {
			return MYSQL;
		}
		if (product.contains("postgresql")) {
			return POSTGRESQL;
		}
		if (product.equals("h2")) {
			return H2;
		}
		throw new IllegalStateException("db-lock does not support " + metaData.getDatabaseProductName() + " "
				+ metaData.getDatabaseProductVersion() + "; supported are MariaDB, MySQL, PostgreSQL and H2");
	}

	/**
	 * The names of every database, for messages.
	 * @return the names, separated by commas
	 */
	static String ids() {
		return Arrays.stream(values()).map(Database::id).collect(Collectors.joining(", "));
	}

}
