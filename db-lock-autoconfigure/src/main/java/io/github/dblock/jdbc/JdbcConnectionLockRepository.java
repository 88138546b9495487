package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import javax.sql.DataSource;

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
 * {@link ConnectionLockRepository} over JDBC, beside a {@link JdbcLockRepository} whose
 * connections, statement timeout and dialect it shares.
 * <ul>
 * <li>The transaction mode runs on the connection of the thread's Spring transaction on the
 * application's {@code DataSource} (a {@code DataSourceTransactionManager}'s or a
 * {@code JpaTransactionManager}'s), found with {@link DataSourceUtils}; a key's row is created
 * beforehand on a connection of the lock repository's own, in autocommit, once per key
 * this JVM has not seen yet.</li>
 * <li>The named mode takes a connection of the lock repository's own and keeps it until
 * the release, in autocommit; its settings are put back before it returns to the pool.</li>
 * </ul>
 * Every statement is bounded by the statement timeout, plus the wait for the statement that
 * waits: as a query timeout and a network timeout, except on a named lock's connection,
 * where the network timeout alone bounds them (its statements return at once or wait in
 * the server for the time they give, and a network timeout closes the connection, which
 * frees its locks), sparing the server-side timeout's cost on every statement.
 */
public class JdbcConnectionLockRepository implements ConnectionLockRepository {

	/** Keys whose row this JVM knows exists, forgotten all at once beyond this many. */
	private static final int KNOWN_KEYS = 10_000;

	private static final Log logger = LogFactory.getLog(JdbcConnectionLockRepository.class);

	private final JdbcLockRepository leases;

	private final DataSource transactionalDataSource;

	private final SqlDialect dialect;

	private final Set<String> knownKeys = ConcurrentHashMap.newKeySet();

	/**
	 * Creates the repository.
	 * @param leases the lease repository whose connections (its own pool, if it has one),
	 * statement timeout and dialect are used for everything but the caller's transaction
	 * @param dataSource the application's data source, whose transactions the transaction
	 * mode joins
	 */
	public JdbcConnectionLockRepository(JdbcLockRepository leases, DataSource dataSource) {
		this.leases = leases;
		this.transactionalDataSource = (dataSource instanceof TransactionAwareDataSourceProxy proxy
				&& proxy.getTargetDataSource() != null) ? proxy.getTargetDataSource() : dataSource;
		this.dialect = leases.dialect();
	}

	@Override
	public boolean lockInTransaction(String key, Duration wait) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalTransactionStateException("no Spring transaction is active on this thread");
		}
		if (!this.knownKeys.contains(key)) {
			this.leases.onOwnConnection((jdbc) -> {
				this.dialect.ensureKeyRow(jdbc, key);
				return Boolean.TRUE;
			});
			if (this.knownKeys.size() >= KNOWN_KEYS) {
				this.knownKeys.clear();
			}
			this.knownKeys.add(key);
		}
		long waitMillis = wait.toMillis();
		return inTransaction(waitMillis, (jdbc) -> this.dialect.lockKeyRow(jdbc, key, waitMillis));
	}

	@Override
	public long nextTransactionToken(String key) {
		// a counter commits on its own, so not on the caller's connection; a sequence is drawn there
		if (this.dialect.tokenSequenceSql() == null) {
			return this.leases.onOwnConnection((jdbc) -> this.dialect.drawToken(jdbc, key, false));
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
			return this.leases.onConnection(connection, false, waitMillis, statements);
		}
		catch (SQLException ex) {
			throw this.leases.translate("Transaction-bound lock statement", ex);
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.transactionalDataSource);
		}
	}

	@Override
	public @Nullable NamedLock tryNamedLock(String key, Duration wait) {
		Connection connection = this.leases.ownConnection();
		long waitMillis = wait.toMillis();
		JdbcTemplate jdbc = this.leases.templateWithoutQueryTimeout(connection, waitMillis);
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
		return this.leases.onOwnConnection((jdbc) -> Optional.ofNullable(this.dialect.namedLocksUnavailable(jdbc)))
			.orElse(null);
	}

	@Override
	public @Nullable String transactionLocksUnavailable() {
		return this.leases.onOwnConnection((jdbc) -> Optional.ofNullable(this.dialect.multiPrimaryCluster(jdbc)))
			.map((cluster) -> cluster + ", whose nodes each lock rows on their own until a transaction commits: "
					+ "callers on different nodes would hold one key at once")
			.orElse(null);
	}

	@Override
	public @Nullable String lockWaitTimeoutRollsBackTransaction() {
		return this.leases
			.onOwnConnection((jdbc) -> Optional.ofNullable(this.dialect.lockWaitTimeoutRollsBackTransaction(jdbc)))
			.orElse(null);
	}

	private <T> T on(Connection connection, long waitMillis, JdbcTemplate jdbc,
			Function<JdbcOperations, T> statements) {
		try {
			return this.leases.onConnection(connection, true, waitMillis, jdbc, statements);
		}
		catch (SQLException ex) {
			throw this.leases.translate("Named lock statement", ex);
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
				return this.connection.isValid(leases.statementTimeoutSeconds());
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
