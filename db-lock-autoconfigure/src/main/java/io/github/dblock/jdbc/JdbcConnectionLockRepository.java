package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import javax.sql.DataSource;

import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link ConnectionLockRepository} over JDBC, on the connections, statement timeout and
 * dialect of a {@link LockConnections}.
 * <ul>
 * <li>The transaction mode runs on the connection of the thread's Spring transaction on the
 * application's {@code DataSource} (a {@code DataSourceTransactionManager}'s or a
 * {@code JpaTransactionManager}'s), found with {@link DataSourceUtils}; a key's row is created
 * beforehand on a lock connection of its own, in autocommit, once per key
 * this JVM has not seen yet.</li>
 * <li>The named mode takes a lock connection of its own and keeps it until
 * the release, in autocommit; its settings are put back before it returns to the pool.</li>
 * </ul>
 * Every statement is bounded by the statement timeout, plus the wait for the statement that
 * waits: as a network timeout and, where the server enforces it, a query timeout (not on
 * PostgreSQL: see {@link LockConnections}), except on a named lock's connection,
 * where the network timeout alone bounds them (its statements return at once or wait in
 * the server for the time they give, and a network timeout closes the connection, which
 * frees its locks), sparing the server-side timeout's cost on every statement.
 *
 * @since 0.1.0
 */
public class JdbcConnectionLockRepository implements ConnectionLockRepository {

	/** Keys whose row this JVM knows exists, forgotten all at once beyond this many. */
	private static final int KNOWN_KEYS = 10_000;

	private static final Log logger = LogFactory.getLog(JdbcConnectionLockRepository.class);

	private final LockConnections connections;

	private final DataSource transactionalDataSource;

	private final SqlDialect dialect;

	private final Set<String> knownKeys = ConcurrentHashMap.newKeySet();

	/**
	 * Creates the repository.
	 * @param connections the lock connections (db-lock's own pool, if it has one),
	 * statement timeout and dialect, used for everything but the caller's transaction
	 * @param dataSource the application's data source, whose transactions the transaction
	 * mode joins
	 */
	public JdbcConnectionLockRepository(LockConnections connections, DataSource dataSource) {
		this.connections = connections;
		this.transactionalDataSource = (dataSource instanceof TransactionAwareDataSourceProxy proxy
				&& proxy.getTargetDataSource() != null) ? proxy.getTargetDataSource() : dataSource;
		this.dialect = connections.dialect();
	}

	@Override
	public boolean lockInTransaction(String key, Duration wait) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalTransactionStateException("no Spring transaction is active on this thread");
		}
		if (!this.knownKeys.contains(key)) {
			this.connections.onOwnConnection((jdbc) -> {
				this.dialect.ensureKeyRow(jdbc, key);
				return Boolean.TRUE;
			});
			if (this.knownKeys.size() >= KNOWN_KEYS) {
				this.knownKeys.clear();
			}
			this.knownKeys.add(key);
		}
		long waitMillis = wait.toMillis();
		return inTransaction(waitMillis, (jdbc) -> lockKeyRow(jdbc, key, waitMillis));
	}

	/**
	 * The dialect's lock of the key's row: a lock-wait timeout is a row not locked, unless
	 * the database rolled back the whole transaction, which is a
	 * {@link TransactionRolledBackException}.
	 */
	private boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		try {
			return this.dialect.lockKeyRow(jdbc, key, waitMillis);
		}
		catch (DataAccessException ex) {
			String rolledBack = this.dialect.errors().rolledBackTransaction(jdbc, ex);
			if (rolledBack != null) {
				throw new TransactionRolledBackException("The database rolled back the whole transaction while it "
						+ "locked '" + key + "': " + rolledBack, ex);
			}
			if (this.dialect.errors().isLockWaitTimeout(ex)) {
				return false;
			}
			throw ex;
		}
	}

	@Override
	public long nextTransactionToken(String key) {
		// a counter commits on its own, so not on the caller's connection; a sequence is drawn there
		if (this.dialect.tokenSequenceSql() == null) {
			return this.connections.onOwnConnection((jdbc) -> this.dialect.drawToken(jdbc, key, false));
		}
		return inTransaction(0, (jdbc) -> this.dialect.drawToken(jdbc, key, false));
	}

	private <T> T inTransaction(long waitMillis, Function<JdbcOperations, T> statements) {
		Connection connection = DataSourceUtils.getConnection(this.transactionalDataSource);
		try {
			if (connection.getAutoCommit()) {
				throw new IllegalTransactionStateException("the thread's transaction is not on db-lock's DataSource "
						+ "(its connection is in autocommit)");
			}
			return this.connections.onConnection(connection, false, waitMillis, statements);
		}
		catch (SQLException ex) {
			throw this.connections.translate("Transaction-bound lock statement", ex);
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.transactionalDataSource);
		}
	}

	@Override
	public @Nullable NamedLock tryNamedLock(String key, Duration wait) {
		Connection connection = this.connections.ownConnection();
		long waitMillis = wait.toMillis();
		JdbcTemplate jdbc = this.connections.templateWithoutQueryTimeout(connection, waitMillis);
		boolean taken = false;
		try {
			taken = on(connection, waitMillis, jdbc, (statements) -> this.dialect.namedLock(statements, key, waitMillis));
			return taken ? new JdbcNamedLock(key, connection, jdbc) : null;
		}
		finally {
			if (!taken) {
				close(connection);
			}
		}
	}

	@Override
	public @Nullable String namedLocksUnavailable() {
		return this.connections.onOwnConnection((jdbc) -> Optional.ofNullable(this.dialect.inspection().namedLocksUnavailable(jdbc)))
			.orElse(null);
	}

	@Override
	public @Nullable String transactionLocksUnavailable() {
		return this.connections.onOwnConnection((jdbc) -> Optional.ofNullable(this.dialect.inspection().multiPrimaryCluster(jdbc)))
			.map((cluster) -> cluster + ", whose nodes each lock rows on their own until a transaction commits: "
					+ "callers on different nodes would hold one key at once")
			.orElse(null);
	}

	@Override
	public @Nullable String lockWaitTimeoutRollsBackTransaction() {
		return this.connections
			.onOwnConnection((jdbc) -> Optional.ofNullable(this.dialect.inspection().lockWaitTimeoutRollsBackTransaction(jdbc)))
			.orElse(null);
	}

	private <T> T on(Connection connection, long waitMillis, JdbcTemplate jdbc,
			Function<JdbcOperations, T> statements) {
		try {
			return this.connections.onConnection(connection, true, waitMillis, jdbc, statements);
		}
		catch (SQLException ex) {
			throw this.connections.translate("Named lock statement", ex);
		}
	}

	private static void close(Connection connection) {
		try {
			connection.close();
		}
		catch (SQLException ex) {
			logger.debug("Could not give a named lock's connection back", ex);
		}
	}

	/** A named lock and the connection that holds it. */
	private final class JdbcNamedLock implements NamedLock {

		private final String key;

		private final Connection connection;

		private final JdbcTemplate jdbc;

		JdbcNamedLock(String key, Connection connection, JdbcTemplate jdbc) {
			this.key = key;
			this.connection = connection;
			this.jdbc = jdbc;
		}

		@Override
		public long nextToken() {
			return on(this.connection, 0, this.jdbc, (jdbc) -> dialect.drawToken(jdbc, this.key, true));
		}

		@Override
		public boolean isAlive() {
			try {
				return this.connection.isValid(connections.statementTimeoutSeconds());
			}
			catch (SQLException ex) {
				return false;
			}
		}

		@Override
		public boolean release() {
			try {
				return on(this.connection, 0, this.jdbc, (jdbc) -> dialect.namedUnlock(jdbc, this.key));
			}
			catch (DataAccessException ex) {
				// the pool must not lend a connection that may still hold the lock: closed for good
				abort();
				throw ex;
			}
			finally {
				close(this.connection);
			}
		}

		private void abort() {
			try {
				this.connection.abort(Runnable::run);
			}
			catch (SQLException ex) {
				logger.debug("Could not close a named lock's connection", ex);
			}
		}

	}

}
