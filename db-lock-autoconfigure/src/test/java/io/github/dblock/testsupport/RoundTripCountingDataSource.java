package io.github.dblock.testsupport;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source that counts the requests its connections send to the server and wait for:
 * every execution of a statement (one string, however many statements it holds), every
 * {@code commit} and {@code rollback}, each one round trip; not the changes of autocommit,
 * isolation or savepoints, nor statements run on an unwrapped driver connection or through
 * {@code Statement.getConnection()}.
 */
public final class RoundTripCountingDataSource extends DelegatingDataSource {

	private static final Set<String> EXECUTIONS = Set.of("execute", "executeQuery", "executeUpdate", "executeBatch",
			"executeLargeUpdate", "executeLargeBatch");

	private final AtomicInteger roundTrips = new AtomicInteger();

	/**
	 * Counts the round trips of a data source's connections.
	 * @param target the data source
	 */
	public RoundTripCountingDataSource(DataSource target) {
		super(target);
	}

	/**
	 * The round trips counted so far.
	 * @return their number
	 */
	public int roundTrips() {
		return this.roundTrips.get();
	}

	@Override
	public Connection getConnection() throws java.sql.SQLException {
		Connection connection = super.getConnection();
		return proxy(Connection.class, connection, (name, result) -> {
			if (name.equals("commit") || name.equals("rollback")) {
				this.roundTrips.incrementAndGet();
			}
			if (result instanceof Statement statement) {
				Class<?> type = (statement instanceof java.sql.CallableStatement) ? java.sql.CallableStatement.class
						: (statement instanceof java.sql.PreparedStatement) ? java.sql.PreparedStatement.class
								: Statement.class;
				return proxy(type, statement, (executed, ignored) -> {
					if (EXECUTIONS.contains(executed)) {
						this.roundTrips.incrementAndGet();
					}
					return ignored;
				});
			}
			return result;
		});
	}

	@SuppressWarnings("unchecked")
	private static <T> T proxy(Class<T> type, Object target, Counted counted) {
		return (T) Proxy.newProxyInstance(RoundTripCountingDataSource.class.getClassLoader(), new Class<?>[] { type },
				(proxy, method, args) -> {
					if (method.getName().equals("unwrap") && args[0] instanceof Class<?> wanted && wanted.isInstance(proxy)) {
						return proxy;
					}
					try {
						return counted.after(method.getName(), method.invoke(target, args));
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@FunctionalInterface
	private interface Counted {

		Object after(String method, Object result);

	}

}
