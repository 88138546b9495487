package io.github.dblock.benchmarks.contender;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;

import javax.sql.DataSource;

/**
 * Which database a contender's pool reaches: the contenders' DDL and statements are
 * MariaDB's and MySQL's unless it is PostgreSQL.
 */
final class Databases {

	private Databases() {
	}

	/** Whether the data source's database is PostgreSQL (asked once, from the driver's metadata). */
	static boolean postgresql(DataSource dataSource) {
		try (Connection connection = dataSource.getConnection()) {
			return connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgresql");
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not tell the database of a contender's pool", ex);
		}
	}

}
