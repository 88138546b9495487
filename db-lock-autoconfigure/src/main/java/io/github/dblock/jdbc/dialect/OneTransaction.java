package io.github.dblock.jdbc.dialect;

import java.sql.SQLException;
import java.util.Objects;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * Runs statements that must commit together on the one connection of a template.
 *
 * @since 0.1.0
 */
public final class OneTransaction {

	private OneTransaction() {
	}

	/**
	 * Runs statements on the one connection of a template in one transaction, rolled back if
	 * they fail; on a connection already in a transaction, within that transaction. The
	 * statements may use the connection or the template.
	 * @param <T> the result's type
	 * @param jdbc statements on one connection
	 * @param statements the statements
	 * @return their result
	 */
	public static <T> T run(JdbcOperations jdbc, ConnectionCallback<T> statements) {
		return Objects.requireNonNull(jdbc.execute((ConnectionCallback<T>) (con) -> {
			if (!con.getAutoCommit()) {
				return statements.doInConnection(con);
			}
			con.setAutoCommit(false);
			T result;
			try {
				result = statements.doInConnection(con);
				con.commit();
			}
			catch (SQLException | RuntimeException ex) {
				try {
					con.rollback();
				}
				catch (SQLException rollback) {
					// left as it is, not in autocommit: the pool rolls a connection back before it hands it out again
					ex.addSuppressed(rollback);
					throw ex;
				}
				con.setAutoCommit(true);
				throw ex;
			}
			con.setAutoCommit(true);
			return result;
		}));
	}

}
