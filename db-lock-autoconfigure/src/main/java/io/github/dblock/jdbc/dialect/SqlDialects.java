package io.github.dblock.jdbc.dialect;

import javax.sql.DataSource;

import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * Finds the {@link SqlDialect} of a database, by name or from the JDBC connection's
 * metadata, through {@link Database}.
 *
 * @since 0.1.0
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
		return Database.named(name).dialect(table);
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
		return database(dataSource).dialect(table);
	}

	/**
	 * The database behind a data source, told from its metadata.
	 * @param dataSource the data source
	 * @return the database
	 * @throws IllegalStateException if the metadata cannot be read, or for a database
	 * db-lock does not support
	 */
	public static Database database(DataSource dataSource) {
		try {
			return JdbcUtils.extractDatabaseMetaData(dataSource, Database::of);
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("db-lock could not read the database's metadata to choose a dialect; "
					+ "set db-lock.dialect to one of " + Database.ids(), ex);
		}
	}

}
