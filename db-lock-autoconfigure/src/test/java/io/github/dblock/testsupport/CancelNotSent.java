package io.github.dblock.testsupport;

import java.sql.Connection;

import io.github.dblock.jdbc.dialect.PostgreSqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL's dialect whose cancel of a statement given up on never reaches the server, as
 * when the server cannot be reached when it is sent: the abandoned statement runs to its end
 * in the server, for tests of what cleans up after it.
 */
public final class CancelNotSent {

	private CancelNotSent() {
	}

	/**
	 * The dialect.
	 * @param table the lock table
	 * @return PostgreSQL's dialect, sending no cancel
	 */
	public static SqlDialect postgreSql(String table) {
		return new PostgreSqlDialect(table) {

			@Override
			public @Nullable Runnable cancelOfAbandonedStatement(Connection connection) {
				return null;
			}

		};
	}

}
