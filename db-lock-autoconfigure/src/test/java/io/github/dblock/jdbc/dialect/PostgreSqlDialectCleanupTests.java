package io.github.dblock.jdbc.dialect;

import java.lang.reflect.Proxy;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;

import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * PostgreSQL's waits for a key row and a named lock, when the wait fails by the network
 * timeout (which closes the connection) and the clean-up after it (the savepoint's rollback,
 * putting {@code lock_timeout} back) fails on the closed connection: the wait's own failure
 * is what the caller gets, with the clean-up's suppressed, so that db-lock sees its client
 * gave up on the statement and cancels it on the server. The failures are the driver's
 * (a connection that throws them), not the database's behaviour under test.
 */
class PostgreSqlDialectCleanupTests {

	private final PostgreSqlDialect dialect = new PostgreSqlDialect("db_lock");

	@Test
	void keyRowWaitThatTimedOutKeepsItsFailureWhenTheRollbackFails() {
		JdbcTemplate jdbc = failingAfterTimeout("FOR UPDATE");
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> this.dialect.lockKeyRow(jdbc, "key", 1000))
			.satisfies(PostgreSqlDialectCleanupTests::timedOutWithCleanupSuppressed);
	}

	@Test
	void namedLockWaitThatTimedOutKeepsItsFailureWhenTheSettingCannotBePutBack() {
		JdbcTemplate jdbc = failingAfterTimeout("pg_advisory_lock");
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> this.dialect.namedLock(jdbc, "key", 1000))
			.satisfies(PostgreSqlDialectCleanupTests::timedOutWithCleanupSuppressed);
	}

	private static void timedOutWithCleanupSuppressed(DataAccessException failure) {
		assertThat(failure).hasRootCauseInstanceOf(SocketTimeoutException.class);
		assertThat(failure.getCause().getSuppressed()).singleElement()
			.satisfies((cleanup) -> assertThat(cleanup).hasMessageContaining("closed"));
	}

	/**
	 * A connection on which the statement containing {@code waiting} fails by a socket
	 * timeout, and every statement after it, and a rollback, fail as on a closed connection.
	 */
	private static JdbcTemplate failingAfterTimeout(String waiting) {
		boolean[] closed = { false };
		Connection connection = proxy(Connection.class, (method, args) -> switch (method) {
			case "setSavepoint" -> proxy(Savepoint.class, (m, a) -> null);
			case "rollback" -> {
				if (closed[0]) {
					throw new SQLException("This connection has been closed.");
				}
				yield null;
			}
			case "prepareStatement" -> statement((String) args[0], waiting, closed);
			case "getAutoCommit", "isClosed" -> false;
			case "getWarnings" -> null;
			default -> null;
		});
		return new JdbcTemplate(new SingleConnectionDataSource(connection, true));
	}

	private static PreparedStatement statement(String sql, String waiting, boolean[] closed) {
		return proxy(PreparedStatement.class, (method, args) -> {
			if (!method.equals("executeQuery")) {
				return method.equals("getWarnings") ? null : defaultValue(method);
			}
			if (closed[0]) {
				throw new SQLException("This connection has been closed.");
			}
			if (sql.contains(waiting)) {
				closed[0] = true;
				throw new SQLException("An I/O error occurred while sending to the backend.", "08006",
						new SocketTimeoutException("Read timed out"));
			}
			// SELECT current_setting('lock_timeout'), set_config(...)
			boolean[] read = { false };
			return proxy(ResultSet.class, (m, a) -> switch (m) {
				case "next" -> {
					boolean first = !read[0];
					read[0] = true;
					yield first;
				}
				case "getString" -> "0";
				default -> defaultValue(m);
			});
		});
	}

	private static Object defaultValue(String method) {
		return switch (method) {
			case "execute", "next", "isClosed", "wasNull" -> false;
			case "executeUpdate", "getUpdateCount" -> 0;
			default -> null;
		};
	}

	@FunctionalInterface
	private interface Handler {

		Object handle(String method, Object[] args) throws Throwable;

	}

	@SuppressWarnings("unchecked")
	private static <T> T proxy(Class<T> type, Handler handler) {
		return (T) Proxy.newProxyInstance(PostgreSqlDialectCleanupTests.class.getClassLoader(), new Class<?>[] { type },
				(proxy, method, args) -> {
					if (method.getName().equals("unwrap") || method.getName().equals("isWrapperFor")) {
						return method.getName().equals("isWrapperFor") ? false : null;
					}
					if (method.getName().equals("hashCode")) {
						return System.identityHashCode(proxy);
					}
					if (method.getName().equals("equals")) {
						return proxy == args[0];
					}
					if (method.getName().equals("toString")) {
						return type.getSimpleName() + " proxy";
					}
					return handler.handle(method.getName(), args);
				});
	}

}
