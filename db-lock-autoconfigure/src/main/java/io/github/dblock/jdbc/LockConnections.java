package io.github.dblock.jdbc;

import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import javax.sql.DataSource;

import io.github.dblock.LockChecks;
import io.github.dblock.jdbc.dialect.Database;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.transaction.support.TransactionSynchronization;

/**
 * The owner of the lock statements' connections: every lock statement runs on a pooled
 * connection of its own, taken from the {@link DataSource} itself and not through Spring's
 * transaction resources, in autocommit: whatever transaction the calling thread has (a
 * {@code DataSourceTransactionManager}'s, a {@code JpaTransactionManager}'s, with its
 * connection bound to the thread), a lock statement neither joins it nor waits for it, and
 * its commit or rollback never touches a lock. While the operation runs, the thread's
 * transaction synchronizations are set aside (not suspended: the caller's resources stay
 * as they are) so that no Spring code ties the lock connection to the caller's transaction.
 * A connection handed out with autocommit off is switched to autocommit for the operation
 * and back after it.
 * <p>
 * Every statement is bounded by the statement timeout: as the connection's network timeout
 * (which the driver enforces, so that a stalled server or network cannot hold a caller),
 * restored before the connection goes back to the pool, and, but for a named lock's, as a
 * JDBC query timeout too (whole seconds rounded up, never zero), enforced by the server on
 * MariaDB and H2 and by Connector/J's own cancel on MySQL. PostgreSQL's lock statements have
 * no query timeout (the commit guard's check keeps its own): pgjdbc enforces one from the
 * client, with a cancel the caller would wait for and a timer task per statement; a
 * statement given up on by its network timeout is cancelled off the caller's thread. From a
 * {@code HikariDataSource}, the wait for the connection is bounded too, like a statement: by
 * the statement timeout or what is left of the call's {@link StatementDeadline}, whichever
 * is less, plus at most the pool's validation timeout for its check of an idle connection;
 * from another data source it is the pool's own. A failure the dialect's
 * {@linkplain io.github.dblock.jdbc.dialect.SqlErrors errors} call contention, or a
 * duplicate key, counts as an attempt that did not acquire.
 * <p>
 * With JTA, a {@code DataSource} that enlists its connections in the thread's JTA
 * transaction enlists the lock connection too: give db-lock a data source that does not.
 * <p>
 * The repositories over JDBC ({@link JdbcLockRepository}, {@link JdbcReadWriteLockRepository},
 * {@link JdbcFairLockRepository}, {@link JdbcConnectionLockRepository},
 * {@link JdbcLockHistoryRepository}) run their statements through one of these.
 *
 * @since 0.1.0
 */
public class LockConnections {

	/** The statement timeout when none is given. */
	public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(2);

	private static final int WRITE_ATTEMPTS = 3;

	private static final Executor CALLER_RUNS = Runnable::run;

	private static final Log logger = LogFactory.getLog(LockConnections.class);

	private static final int CANCEL_THREADS = 2;

	private static final int CANCEL_QUEUE = 1000;

	/**
	 * Where the cancels of statements given up on by their network timeout are sent
	 * ({@link SqlDialect#cancelOfAbandonedStatement}), off the callers' threads: at most
	 * {@value #CANCEL_THREADS} at once, up to {@value #CANCEL_QUEUE} queued (then the oldest
	 * dropped), daemon threads that end when idle. Best effort: a cancel that cannot reach the
	 * server is not sent again.
	 */
	private static final ThreadPoolExecutor CANCELS = cancels();

	private final DataSource dataSource;

	private final PoolWait poolWait;

	private final SQLExceptionTranslator exceptionTranslator;

	private final SqlDialect dialect;

	/** Whether maintenance transactions run at READ COMMITTED; off once the server refused it. */
	private volatile boolean readCommittedMaintenance = true;

	private final int networkTimeoutMillis;

	/**
	 * Creates the owner of the lock connections of a data source.
	 * @param dataSource the data source of the lock statements (a
	 * {@link TransactionAwareDataSourceProxy} is looked through to its target)
	 * @param dialect the SQL of its database, naming the lock table
	 * @param statementTimeout the longest a lock statement may take, from sending it to its
	 * reply; at least one millisecond
	 */
	public LockConnections(DataSource dataSource, SqlDialect dialect, Duration statementTimeout) {
		if (statementTimeout.toMillis() < 1 || statementTimeout.toMillis() > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("The statement timeout (db-lock.statement-timeout) must be between 1ms "
					+ "and " + LockChecks.format(Duration.ofMillis(Integer.MAX_VALUE)) + ", got "
					+ LockChecks.format(statementTimeout));
		}
		// a proxy that hands out the thread's transactional connection would defeat the isolation
		this.dataSource = (dataSource instanceof TransactionAwareDataSourceProxy proxy
				&& proxy.getTargetDataSource() != null) ? proxy.getTargetDataSource() : dataSource;
		this.poolWait = PoolWait.of(this.dataSource);
		this.exceptionTranslator = new SQLErrorCodeSQLExceptionTranslator(this.dataSource);
		this.dialect = dialect;
		this.networkTimeoutMillis = (int) statementTimeout.toMillis();
	}

	/**
	 * A new feed of the keys released while wanted, on this data source, where the database
	 * tells them (PostgreSQL).
	 * @return the feed, with no connection yet, or {@code null}
	 */
	@Nullable ReleaseFeed releaseFeed() {
		return (this.dialect.database() == Database.POSTGRESQL) ? new PostgreSqlReleaseFeed(this.poolWait,
				this.dialect.table(), this.exceptionTranslator, Duration.ofMillis(this.networkTimeoutMillis)) : null;
	}

	/**
	 * The dialect of the lock statements.
	 * @return the dialect
	 */
	public SqlDialect dialect() {
		return this.dialect;
	}

	/**
	 * Runs an operation's statements on a connection of its own, outside whatever
	 * transaction the thread has, in autocommit and within the statement timeout.
	 */
	<T> T onOwnConnection(Function<JdbcOperations, T> statements) {
		List<TransactionSynchronization> setAside = SetAsideSynchronizations.setAside();
		try {
			Connection connection = ownConnection();
			try {
				return onConnection(connection, statements);
			}
			finally {
				connection.close();
			}
		}
		catch (SQLException ex) {
			throw translate("Lock statement on a connection of its own", ex);
		}
		finally {
			SetAsideSynchronizations.restore(setAside);
		}
	}

	/**
	 * Runs an operation's statements in one transaction of their own, on a connection of its
	 * own, at READ COMMITTED (so that on MySQL and MariaDB it takes no gap or next-key locks,
	 * and keeps the locks of the rows it changes alone), each within the statement timeout:
	 * for maintenance steps that must be atomic.
	 */
	<T> T inOwnTransaction(Function<JdbcOperations, T> statements) {
		List<TransactionSynchronization> setAside = SetAsideSynchronizations.setAside();
		try {
			boolean readCommitted = this.readCommittedMaintenance;
			try {
				return inOwnTransaction(statements, readCommitted);
			}
			catch (RuntimeException ex) {
				if (!readCommitted || !this.dialect.errors().refusesReadCommittedWrites(ex)) {
					throw ex;
				}
				// a statement-based binary log refuses InnoDB's writes at READ COMMITTED: the connection's own then
				this.readCommittedMaintenance = false;
				logger.info("Lock maintenance runs at the connection's own isolation: the server's statement-based "
						+ "binary log refuses writes at READ COMMITTED (" + ex.getMessage() + ")");
				return inOwnTransaction(statements, false);
			}
		}
		finally {
			SetAsideSynchronizations.restore(setAside);
		}
	}

	private <T> T inOwnTransaction(Function<JdbcOperations, T> statements, boolean readCommitted) {
		try (Connection connection = ownConnection()) {
			boolean autoCommit = connection.getAutoCommit();
			int isolation = connection.getTransactionIsolation();
			boolean changeIsolation = readCommitted && isolation != Connection.TRANSACTION_READ_COMMITTED;
			try {
				if (changeIsolation) {
					// no gap or next-key locks: a maintenance step locks the rows it changes and no more
					connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
				}
				if (autoCommit) {
					connection.setAutoCommit(false);
				}
				T result = onConnection(connection, false, 0, statements);
				connection.commit();
				return result;
			}
			catch (RuntimeException | SQLException ex) {
				connection.rollback();
				throw ex;
			}
			finally {
				if (autoCommit) {
					connection.setAutoCommit(true);
				}
				if (changeIsolation) {
					connection.setTransactionIsolation(isolation);
				}
			}
		}
		catch (SQLException ex) {
			throw translate("Lock maintenance transaction on a connection of its own", ex);
		}
	}

	private <T> T onConnection(Connection connection, Function<JdbcOperations, T> statements) throws SQLException {
		return onConnection(connection, true, 0, statements);
	}

	/**
	 * Runs statements on a connection, within the statement timeout plus {@code waitMillis},
	 * in autocommit or not as asked; the connection's settings are put back after them.
	 */
	<T> T onConnection(Connection connection, boolean autoCommitted, long waitMillis,
			Function<JdbcOperations, T> statements) throws SQLException {
		return onConnection(connection, autoCommitted, waitMillis, template(connection, waitMillis), statements);
	}

	/**
	 * Statements on one connection, with the statement timeout plus {@code waitMillis} as
	 * their query timeout where the database enforces it; where the driver would enforce it
	 * from the client ({@link SqlDialect#cancelsQueriesFromClient()}), none: the network
	 * timeout bounds them, and a statement given up on by it is cancelled by db-lock.
	 */
	JdbcTemplate template(Connection connection, long waitMillis) {
		JdbcTemplate jdbc = new DeadlineTemplate(connection, this.networkTimeoutMillis, waitMillis, this.exceptionTranslator);
		if (!this.dialect.cancelsQueriesFromClient()) {
			jdbc.setQueryTimeout(DeadlineTemplate.queryTimeoutSeconds(this.networkTimeoutMillis + waitMillis));
		}
		return jdbc;
	}

	/**
	 * Statements on one connection with no query timeout, bounded by the network timeout
	 * alone: for a connection that holds a named lock, whose statements return at once or
	 * wait in the server for a time they give, and where a network timeout closes the
	 * connection (which frees its locks).
	 */
	JdbcTemplate templateWithoutQueryTimeout(Connection connection, long waitMillis) {
		return new DeadlineTemplate(connection, this.networkTimeoutMillis, waitMillis, this.exceptionTranslator);
	}

	/**
	 * Runs statements with a template on a connection, within the network timeout of the
	 * statement timeout plus {@code waitMillis}, in autocommit or not as asked; the
	 * connection's settings are put back after them.
	 */
	<T> T onConnection(Connection connection, boolean autoCommitted, long waitMillis, JdbcTemplate jdbc,
			Function<JdbcOperations, T> statements) throws SQLException {
		boolean autoCommit = connection.getAutoCommit();
		if (autoCommitted && !autoCommit) {
			connection.setAutoCommit(true);
		}
		int networkTimeout = connection.getNetworkTimeout();
		connection.setNetworkTimeout(CALLER_RUNS,
				(int) Math.max(1, Math.min(StatementDeadline.millisLeft(this.networkTimeoutMillis, waitMillis),
						Integer.MAX_VALUE)));
		// asked now: once the statement has timed out, the pool has closed its side of the connection
		Runnable cancel = this.dialect.cancelOfAbandonedStatement(connection);
		try {
			T result = statements.apply(jdbc);
			if (result == null) {
				throw new IllegalStateException("No result from " + this.dialect);
			}
			return result;
		}
		catch (RuntimeException ex) {
			if (cancel != null && timedOut(ex)) {
				CANCELS.execute(cancel);
			}
			throw ex;
		}
		finally {
			restore(connection, autoCommit, networkTimeout);
		}
	}

	/** Whether a statement failed by its network timeout: its client gave up on it. */
	private static boolean timedOut(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SocketTimeoutException) {
				return true;
			}
		}
		return false;
	}

	private static ThreadPoolExecutor cancels() {
		ThreadPoolExecutor executor = new ThreadPoolExecutor(CANCEL_THREADS,
				CANCEL_THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(CANCEL_QUEUE),
				(task) -> {
					Thread thread = new Thread(task, "db-lock-cancel");
					thread.setDaemon(true);
					thread.setContextClassLoader(null);
					return thread;
				}, new ThreadPoolExecutor.DiscardOldestPolicy());
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	/** Puts a connection back as the pool lent it; one broken by a timeout is left to the pool. */
	private static void restore(Connection connection, boolean autoCommit, int networkTimeout) {
		try {
			if (!connection.isClosed()) {
				connection.setNetworkTimeout(CALLER_RUNS, networkTimeout);
				if (!autoCommit && connection.getAutoCommit()) {
					connection.setAutoCommit(false);
				}
			}
		}
		catch (SQLException ex) {
			logger.debug("Could not restore the settings of a connection after a lock statement", ex);
		}
	}

	/** The statement timeout in milliseconds, the network timeout of every statement. */
	int networkTimeoutMillis() {
		return this.networkTimeoutMillis;
	}

	/** The statement timeout in whole seconds, rounded up. */
	int statementTimeoutSeconds() {
		return (this.networkTimeoutMillis + 999) / 1000;
	}

	/**
	 * Whether a statement's wait for a connection is bounded by the statement timeout or
	 * what is left of its call's {@link StatementDeadline}, whichever is less: true for a
	 * {@code HikariDataSource} (Spring Boot's default pool, or db-lock's own); with another
	 * data source the wait is the pool's own and outside a caller's bound.
	 * @return whether the pool wait is bounded
	 */
	public boolean boundsPoolWait() {
		return this.poolWait.isBounded();
	}

	/**
	 * A connection of the lock's data source, for a named lock to hold, within the statement
	 * timeout or what is left of the thread's {@link StatementDeadline}, whichever is less,
	 * where the pool lets the wait be bounded.
	 * @return the connection
	 * @throws CannotGetJdbcConnectionException if there is none
	 */
	Connection ownConnection() {
		try {
			return this.poolWait.getConnection(StatementDeadline.millisLeft(this.networkTimeoutMillis, 0));
		}
		catch (SQLException ex) {
			throw new CannotGetJdbcConnectionException("No connection for a lock statement: the database could not "
					+ "be reached, or the pool had no free connection within its connection timeout (are "
					+ "callers' transactions holding every connection?)", ex);
		}
	}

	DataAccessException translate(String task, SQLException ex) {
		DataAccessException translated = this.exceptionTranslator.translate(task, null, ex);
		return (translated != null) ? translated
				: new org.springframework.jdbc.UncategorizedSQLException(task, null, ex);
	}

	/** A deadlock victim's write did nothing: run it again, what it checks still holds. */
	<T> T retryingContention(java.util.function.Supplier<T> write) {
		for (int attempt = 1;; attempt++) {
			try {
				return write.get();
			}
			catch (DataAccessException ex) {
				if (!isContention(ex) || attempt == WRITE_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	/**
	 * A release that lost to contention runs again, with a short pause, until it succeeds or
	 * the statement timeout has passed since the first attempt (or the thread's
	 * {@link StatementDeadline} has come): a release that gave up would leave the key taken
	 * for the rest of its lease.
	 */
	<T> T releasing(java.util.function.Supplier<T> release) {
		long now = System.nanoTime();
		long deadline = now + TimeUnit.MILLISECONDS.toNanos(StatementDeadline.millisLeft(this.networkTimeoutMillis, 0));
		// the attempts, their waits for a connection and their statements share that time
		try (StatementDeadline shared = StatementDeadline.openAtMost(now)) {
			return releasingWithin(deadline, release);
		}
	}

	private <T> T releasingWithin(long deadline, java.util.function.Supplier<T> release) {
		for (int attempt = 1;; attempt++) {
			try {
				return release.get();
			}
			catch (DataAccessException ex) {
				if (!isContention(ex) || System.nanoTime() - deadline > 0) {
					throw ex;
				}
				if (attempt >= WRITE_ATTEMPTS) {
					// jittered, so that two releases that conflict do not meet again
					LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(
							ThreadLocalRandom.current().nextLong(200, 200 + 1000L * Math.min(attempt, 20))));
				}
			}
		}
	}

	/**
	 * Whether a statement failed by waiting too long: for a lock (contention), past its query
	 * timeout, or past its network timeout.
	 */
	boolean waitedTooLong(DataAccessException ex) {
		return isContention(ex) || ex instanceof org.springframework.dao.QueryTimeoutException || timedOut(ex);
	}

	/**
	 * Whether a statement failed by its network timeout: the client gave up on it, and the
	 * server may still run it, and commit it.
	 */
	boolean clientGaveUp(DataAccessException ex) {
		return timedOut(ex);
	}

	/** Contention as the dialect's errors tell it, or a duplicate key: an attempt to try again. */
	boolean isContention(DataAccessException ex) {
		return ex instanceof DuplicateKeyException || this.dialect.errors().isContention(ex);
	}

}
