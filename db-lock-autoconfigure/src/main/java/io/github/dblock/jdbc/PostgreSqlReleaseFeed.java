package io.github.dblock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.util.ClassUtils;

/**
 * The {@link ReleaseFeed} of PostgreSQL: {@code LISTEN} on the channel named after the lock
 * table, on a connection of the lock statements' pool, and pgjdbc's
 * {@code PGConnection.getNotifications(int)} (looked up from the connection's own class
 * loader: the driver is not a dependency of db-lock's).
 * <ul>
 * <li>The connection's network timeout is the statement timeout, so that {@code LISTEN},
 * {@code UNLISTEN} and the check below never wait longer on a silent network
 * ({@code getNotifications} sets its own while it waits).</li>
 * <li>A connection that tells nothing for {@link #CHECK_NANOS} is checked
 * ({@link Connection#isValid(int)}); one held for {@link #HOLD_NANOS} is given back and
 * another taken at the next call, so that the pool's lifetime of a connection and a switch
 * to another server after a failover reach the feed too.</li>
 * <li>A connection that failed, or whose {@code UNLISTEN} did, is evicted from its pool,
 * never handed out again still listening.</li>
 * </ul>
 */
final class PostgreSqlReleaseFeed implements ReleaseFeed {

	/** How long the feed may hear nothing before it checks its connection. */
	static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** How long the feed keeps one connection. */
	static final long HOLD_NANOS = TimeUnit.MINUTES.toNanos(5);

	private final PoolWait pool;

	private final String channel;

	private final SQLExceptionTranslator translator;

	private final int timeoutMillis;

	private @Nullable Connection connection;

	/** The connection as pgjdbc's {@code PGConnection}, once it listens. */
	private @Nullable Object listening;

	/**
	 * {@code getNotifications(int)}, {@code PGNotification.getName()}, {@code getParameter()},
	 * {@code getNotifications()}.
	 */
	private Method @Nullable [] methods;

	private boolean autoCommit;

	private int networkTimeout;

	private long checkedAt;

	private long openedAt;

	/**
	 * @param pool the pool of the lock statements
	 * @param channel the lock table's name, the trigger's channel
	 * @param translator the translator of the lock statements' errors
	 * @param timeout the longest {@code LISTEN}, {@code UNLISTEN}, the connection check and
	 * the wait for a connection may take
	 */
	PostgreSqlReleaseFeed(PoolWait pool, String channel, SQLExceptionTranslator translator, Duration timeout) {
		this.pool = pool;
		this.channel = channel;
		this.translator = translator;
		this.timeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
	}

	@Override
	public List<String> await(Duration timeout) {
		try {
			Object listening = (this.listening != null) ? this.listening : listen();
			Method[] methods = this.methods;
			Object[] told = (Object[]) methods[0].invoke(listening,
					(int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
			long now = System.nanoTime();
			if (told == null || told.length == 0) {
				if (now - this.openedAt >= HOLD_NANOS) {
					close();
				}
				else if (now - this.checkedAt >= CHECK_NANOS) {
					if (!this.connection.isValid((this.timeoutMillis + 999) / 1000)) {
						throw new SQLException("The connection of the wake-ups is no longer valid", "08003");
					}
					this.checkedAt = System.nanoTime();
				}
				return List.of();
			}
			this.checkedAt = now;
			List<String> keys = new ArrayList<>(told.length);
			for (Object notification : told) {
				if (this.channel.equals(methods[1].invoke(notification))) {
					keys.add((String) methods[2].invoke(notification));
				}
			}
			return keys;
		}
		catch (InvocationTargetException ex) {
			throw failed(ex.getCause());
		}
		catch (UnsupportedOperationException ex) {
			close();
			throw ex;
		}
		catch (SQLException | RuntimeException ex) {
			throw failed(ex);
		}
		catch (ReflectiveOperationException | LinkageError ex) {
			close();
			throw new UnsupportedOperationException("Could not call pgjdbc to listen: " + ex, ex);
		}
	}

	private Object listen() throws SQLException, ReflectiveOperationException {
		Connection connection = this.pool.getConnection(this.timeoutMillis);
		this.connection = connection;
		this.openedAt = System.nanoTime();
		Class<?> pgConnection = pgjdbc(connection);
		Class<?> pgNotification = ClassUtils.forName("org.postgresql.PGNotification", pgConnection.getClassLoader());
		this.methods = new Method[] { pgConnection.getMethod("getNotifications", int.class),
				pgNotification.getMethod("getName"), pgNotification.getMethod("getParameter"),
				pgConnection.getMethod("getNotifications") };
		Object listening = connection.unwrap(pgConnection);
		this.networkTimeout = connection.getNetworkTimeout();
		connection.setNetworkTimeout(Runnable::run, this.timeoutMillis);
		this.autoCommit = connection.getAutoCommit();
		if (!this.autoCommit) {
			// LISTEN takes effect when its transaction commits
			connection.setAutoCommit(true);
		}
		try (Statement statement = connection.createStatement()) {
			statement.execute("LISTEN " + quoted(this.channel));
		}
		this.listening = listening;
		this.checkedAt = System.nanoTime();
		return listening;
	}

	/** pgjdbc's {@code PGConnection}, which the connection unwraps to. */
	private static Class<?> pgjdbc(Connection connection) throws ClassNotFoundException {
		try {
			Connection physical = connection.unwrap(Connection.class);
			ClassLoader loader = physical.getClass().getClassLoader();
			if (ClassUtils.isPresent("org.postgresql.PGConnection", loader)) {
				Class<?> pgConnection = ClassUtils.forName("org.postgresql.PGConnection", loader);
				if (connection.isWrapperFor(pgConnection)) {
					return pgConnection;
				}
			}
			throw new UnsupportedOperationException("The connections of the lock statements (" + physical.getClass().getName()
					+ ") do not unwrap to pgjdbc's PGConnection: they cannot listen for releases");
		}
		catch (SQLException ex) {
			throw new UnsupportedOperationException("The connections of the lock statements (" + connection.getClass().getName()
					+ ") do not unwrap: they cannot listen for releases (" + ex.getMessage() + ")", ex);
		}
	}

	@Override
	public void close() {
		Connection connection = this.connection;
		Object listening = this.listening;
		this.connection = null;
		this.listening = null;
		if (connection == null) {
			return;
		}
		try {
			if (listening != null) {
				try (Statement statement = connection.createStatement()) {
					statement.execute("UNLISTEN " + quoted(this.channel));
				}
				// notifications that came before the UNLISTEN, not left for the connection's next user
				this.methods[3].invoke(listening);
			}
			if (!this.autoCommit) {
				connection.setAutoCommit(false);
			}
			connection.setNetworkTimeout(Runnable::run, this.networkTimeout);
		}
		catch (SQLException | ReflectiveOperationException | RuntimeException ex) {
			// it may still listen: never handed out again
			this.pool.evict(connection);
		}
		finally {
			JdbcUtils.closeConnection(connection);
		}
	}

	/** Gives back a connection that failed, evicted, with no statement more on it. */
	private DataAccessException failed(@Nullable Throwable cause) {
		Connection connection = this.connection;
		this.connection = null;
		this.listening = null;
		if (connection != null) {
			this.pool.evict(connection);
			JdbcUtils.closeConnection(connection);
		}
		SQLException sql = (cause instanceof SQLException ex) ? ex : new SQLException(String.valueOf(cause), cause);
		DataAccessException translated = this.translator.translate("LISTEN " + this.channel, null, sql);
		return (translated != null) ? translated : new DataAccessResourceFailureException(sql.getMessage(), sql);
	}

	private static String quoted(String identifier) {
		return '"' + identifier.replace("\"", "\"\"") + '"';
	}

}
