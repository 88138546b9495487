package io.github.dblock.jdbc.dialect;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;

import org.springframework.jdbc.core.ArgumentPreparedStatementSetter;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * Runs statements that must commit together on the one connection of a template.
 *
 * @since 0.1.0
 */
public final class OneTransaction {

	private OneTransaction() {
	}

	/**
	 * Sends the statements of {@link SqlSyntax#sentTogether} (or of
	 * {@link SqlSyntax#sentInSequence}) in one round trip, in autocommit (they begin and
	 * commit their own transaction, or each is one), and hands the rows of their result sets
	 * to the handlers, the first result set's to the first handler, and so on. A failure
	 * rolls the transaction back before the connection goes back to the pool (which would
	 * not, the connection being in autocommit): an aborted transaction would refuse the next
	 * caller's statements.
	 * @param jdbc statements on one connection, in autocommit
	 * @param sql the statements
	 * @param parameters the parameters of all the statements, in order
	 * @param resultSets a handler for each result set the statements give
	 * @throws org.springframework.dao.DataAccessException if a statement failed, or the
	 * statements gave another number of result sets
	 */
	public static void sendTogether(JdbcOperations jdbc, String sql, Object[] parameters,
			RowCallbackHandler... resultSets) {
		jdbc.execute((ConnectionCallback<Object>) (con) -> {
			try (PreparedStatement ps = con.prepareStatement(sql)) {
				new ArgumentPreparedStatementSetter(parameters).setValues(ps);
				int given = 0;
				for (boolean rows = ps.execute();; rows = ps.getMoreResults()) {
					if (rows) {
						try (ResultSet rs = ps.getResultSet()) {
							while (given < resultSets.length && rs.next()) {
								resultSets[given].processRow(rs);
							}
						}
						given++;
					}
					else if (ps.getUpdateCount() == -1) {
						break;
					}
				}
				if (given != resultSets.length) {
					throw new SQLException("The statements gave " + given + " result sets, not " + resultSets.length);
				}
				return given;
			}
			catch (SQLException | RuntimeException ex) {
				try (Statement rollback = con.createStatement()) {
					rollback.execute("ROLLBACK");
				}
				catch (SQLException rollback) {
					// the connection is broken: the pool discards it
					ex.addSuppressed(rollback);
				}
				throw ex;
			}
		});
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
