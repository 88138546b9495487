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

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.util.ClassUtils;

/**
 * The {@link ReleaseFeed} of PostgreSQL: {@code LISTEN} on the channel named after the lock
 * table, on a connection of the lock statements' data source held while the feed listens,
 * and pgjdbc's {@code PGConnection.getNotifications(int)} (looked up from the connection's
 * own class loader: the driver is not a dependency of db-lock's). A connection that reports
 * nothing for {@link #CHECK_NANOS} is checked ({@link Connection#isValid(int)}), so that one
 * that a network failure left silent is given back and another taken.
 */
final class PostgreSqlReleaseFeed implements ReleaseFeed {

	/** How long the feed may hear nothing before it checks its connection. */
	static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final DataSource dataSource;

	private final String channel;

	private final SQLExceptionTranslator translator;

	private final int timeoutSeconds;

	private @Nullable Connection connection;

	/** The connection as pgjdbc's {@code PGConnection}. */
	private @Nullable Object listening;

	/**
	 * {@code getNotifications(int)}, {@code PGNotification.getName()}, {@code getParameter()},
	 * {@code getNotifications()}.
	 */
	private Method @Nullable [] methods;

	private boolean autoCommit;

	private long checkedAt;

	/**
	 * @param dataSource the data source of the lock statements
	 * @param channel the lock table's name, the trigger's channel
	 * @param translator the translator of the lock statements' errors
	 * @param timeout the longest {@code LISTEN} and the connection check may take
	 */
	PostgreSqlReleaseFeed(DataSource dataSource, String channel, SQLExceptionTranslator translator, Duration timeout) {
		this.dataSource = dataSource;
		this.channel = channel;
		this.translator = translator;
		this.timeoutSeconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (timeout.toMillis() + 999) / 1000));
	}

	@Override
	public List<String> await(Duration timeout) {
		try {
			Object listening = (this.listening != null) ? this.listening : listen();
			Method[] methods = this.methods;
			Object[] told = (Object[]) methods[0].invoke(listening, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
			long now = System.nanoTime();
			if (told == null || told.length == 0) {
				if (now - this.checkedAt >= CHECK_NANOS) {
					if (!this.connection.isValid(this.timeoutSeconds)) {
						throw new SQLException("The connection of the wake-ups is no longer valid");
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
		catch (ReflectiveOperationException ex) {
			close();
			throw new UnsupportedOperationException("Could not call pgjdbc to listen: " + ex, ex);
		}
	}

	private Object listen() throws SQLException, ReflectiveOperationException {
		Connection connection = this.dataSource.getConnection();
		this.connection = connection;
		Connection physical = connection.unwrap(Connection.class);
		ClassLoader loader = physical.getClass().getClassLoader();
		if (!ClassUtils.isPresent("org.postgresql.PGConnection", loader)) {
			throw new UnsupportedOperationException("The connections of the lock statements are " + physical.getClass().getName()
					+ ", not pgjdbc's: they cannot listen for releases");
		}
		Class<?> pgConnection = ClassUtils.forName("org.postgresql.PGConnection", loader);
		if (!connection.isWrapperFor(pgConnection)) {
			throw new UnsupportedOperationException("The connections of the lock statements (" + connection.getClass().getName()
					+ ") do not unwrap to pgjdbc's PGConnection: they cannot listen for releases");
		}
		Class<?> pgNotification = ClassUtils.forName("org.postgresql.PGNotification", loader);
		this.methods = new Method[] { pgConnection.getMethod("getNotifications", int.class),
				pgNotification.getMethod("getName"), pgNotification.getMethod("getParameter"),
				pgConnection.getMethod("getNotifications") };
		Object listening = connection.unwrap(pgConnection);
		this.autoCommit = connection.getAutoCommit();
		if (!this.autoCommit) {
			// LISTEN takes effect when its transaction commits
			connection.setAutoCommit(true);
		}
		try (Statement statement = connection.createStatement()) {
			statement.setQueryTimeout(this.timeoutSeconds);
			statement.execute("LISTEN " + quoted(this.channel));
		}
		this.listening = listening;
		this.checkedAt = System.nanoTime();
		return listening;
	}

	@Override
	public void close() {
		Connection connection = this.connection;
		this.connection = null;
		Object listening = this.listening;
		this.listening = null;
		if (connection == null) {
			return;
		}
		try {
			if (listening != null) {
				try (Statement statement = connection.createStatement()) {
					statement.setQueryTimeout(this.timeoutSeconds);
					statement.execute("UNLISTEN " + quoted(this.channel));
				}
				// notifications that came before the UNLISTEN, not left for the connection's next user
				this.methods[3].invoke(listening);
			}
			if (!this.autoCommit) {
				connection.setAutoCommit(false);
			}
		}
		catch (SQLException | ReflectiveOperationException | RuntimeException ex) {
			// the connection is broken: the pool checks it when it comes back
		}
		finally {
			JdbcUtils.closeConnection(connection);
		}
	}

	private DataAccessException failed(Throwable cause) {
		close();
		SQLException sql = (cause instanceof SQLException ex) ? ex : new SQLException(String.valueOf(cause), cause);
		DataAccessException translated = this.translator.translate("LISTEN " + this.channel, null, sql);
		return (translated != null) ? translated
				: new org.springframework.dao.DataAccessResourceFailureException(sql.getMessage(), sql);
	}

	private static String quoted(String identifier) {
		return '"' + identifier.replace("\"", "\"\"") + '"';
	}

}
