package io.github.dblock.jdbc;

import java.sql.DatabaseMetaData;
import java.util.Locale;
import java.util.function.Function;

import javax.sql.DataSource;

import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * Finds the {@link SqlDialect} of a database, by name or from the JDBC connection's
 * metadata.
 */
public final class SqlDialects {

	private SqlDialects() {
	}

	/**
	 * The dialect with a name: {@code mariadb}, {@code mysql}, {@code postgresql} or
	 * {@code h2}.
	 * @param name the name, in any case
	 * @param table the lock table
	 * @return the dialect
	 * @throws IllegalArgumentException for another name
	 */
	public static SqlDialect named(String name, String table) {
		Function<String, SqlDialect> factory = switch (name.toLowerCase(Locale.ROOT)) {
			case "mariadb" -> MariaDbDialect::new;
			case "mysql" -> MySqlDialect::new;
			case "postgresql" -> PostgreSqlDialect::new;
			case "h2" -> H2Dialect::new;
			default -> throw new IllegalArgumentException(
					"Unknown db-lock dialect '" + name + "': expected one of mariadb, mysql, postgresql, h2");
		};
		return factory.apply(table);
	}

	/**
	 * The dialect of the database behind a data source, told from its metadata (MariaDB
	 * apart from MySQL, also when reached through MySQL's driver).
	 * @param dataSource the data source
	 * @param table the lock table
	 * @return the dialect
	 * @throws IllegalStateException for a database db-lock does not support
	 */
	public static SqlDialect detect(DataSource dataSource, String table) {
		String product;
		try {
			product = JdbcUtils.extractDatabaseMetaData(dataSource, SqlDialects::productOf);
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("db-lock could not read the database's metadata to choose a dialect; "
					+ "set db-lock.dialect to one of mariadb, mysql, postgresql, h2", ex);
		}
		return named(product, table);
	}

	private static String productOf(DatabaseMetaData metaData) throws java.sql.SQLException {
		String product = metaData.getDatabaseProductName().toLowerCase(Locale.ROOT);
		String version = metaData.getDatabaseProductVersion().toLowerCase(Locale.ROOT);
		if (product.contains("mariadb") || version.contains("mariadb")) {
			return "mariadb";
		}
		if (product.contains("mysql")) {
			return "mysql";
		}
		if (product.contains("postgresql")) {
			return "postgresql";
		}
		if (product.equals("h2")) {
			return "h2";
		}
		throw new IllegalStateException("db-lock does not support " + metaData.getDatabaseProductName() + " "
				+ metaData.getDatabaseProductVersion() + "; supported are MariaDB, MySQL, PostgreSQL and H2");
	}

}
