package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.Executor;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * Statements on one connection, each bounded by the statement timeout (plus the wait it
 * was given) or by what is left of the thread's {@link StatementDeadline}, whichever
 * comes first: the query timeout (where the statements have one) and the network timeout
 * are cut for a statement sent when less is left.
 */
final class DeadlineTemplate extends JdbcTemplate {

	private static final Executor CALLER_RUNS = Runnable::run;

	private final Connection connection;

	private final int networkTimeoutMillis;

	private final long waitMillis;

	DeadlineTemplate(Connection connection, int networkTimeoutMillis, long waitMillis,
			SQLExceptionTranslator exceptionTranslator) {
		this.connection = connection;
		this.networkTimeoutMillis = networkTimeoutMillis;
		this.waitMillis = waitMillis;
		setDataSource(new SingleConnectionDataSource(connection, true));
		setExceptionTranslator(exceptionTranslator);
	}

	/**
	 * The JDBC query timeout of a statement whose network timeout is {@code networkMillis},
	 * where the server enforces it: whole seconds rounded up (zero would be no limit at all).
	 * Where the driver cancels from the client
	 * ({@link io.github.dblock.jdbc.dialect.SqlDialect#cancelsQueriesFromClient()}) the
	 * statements have none.
	 */
	static int queryTimeoutSeconds(long networkMillis) {
		long seconds = (networkMillis + 999) / 1000;
		return (int) Math.min(Math.max(1, seconds), Integer.MAX_VALUE);
	}

	@Override
	protected void applyStatementSettings(java.sql.Statement statement) throws SQLException {
		super.applyStatementSettings(statement);
		long limit = this.networkTimeoutMillis + this.waitMillis;
		long left = StatementDeadline.millisLeft(this.networkTimeoutMillis, this.waitMillis);
		if (left < limit) {
			int millis = (int) Math.max(1, left);
			this.connection.setNetworkTimeout(CALLER_RUNS, millis);
			if (getQueryTimeout() > 0) {
				statement.setQueryTimeout(queryTimeoutSeconds(millis));
			}
		}
	}

}
