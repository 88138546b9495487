package io.github.dblock.benchmarks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import javax.sql.DataSource;

/**
 * Counts, per thread, the statements a thread sends through a data source: executed
 * statements, and the connection calls the driver sends as statements of their own
 * ({@code commit}, {@code rollback}, a changed autocommit or isolation). The hot-key
 * workers use it to tell a waiter's statements from a holder's, which the server's
 * counters cannot; the server's {@code Questions} stay the reported totals. It also tells
 * a cycle that reached the database (its acquisition sent a statement) from one that did
 * not (a key handed over inside the JVM), and counts, for every thread together and for
 * db-lock's watchdog threads apart, the statements sent and the time they took, which the
 * curves report on PostgreSQL too.
 */
final class StatementTally {

	private static final Set<String> EXECUTES = Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate",
			"executeBatch", "executeLargeBatch");

	private static final ThreadLocal<long[]> COUNT = ThreadLocal.withInitial(() -> new long[1]);

	/** The names of db-lock's watchdog threads start so. */
	private static final String WATCHDOG_THREAD = "db-lock-watchdog-";

	private static final LongAdder ALL = new LongAdder();

	private static final LongAdder WATCHDOG = new LongAdder();

	private static final LongAdder WATCHDOG_NANOS = new LongAdder();

	/** Asked at each statement: a scheduler's worker bears the watchdog's name only while it renews. */
	private static final Supplier<Boolean> ON_WATCHDOG = () -> Thread.currentThread().getName()
		.startsWith(WATCHDOG_THREAD);

	private StatementTally() {
	}

	/** The statements this thread has sent through a counting data source so far. */
	static long current() {
		return COUNT.get()[0];
	}

	/** Every statement sent through a counting data source so far, on any thread. */
	static long all() {
		return ALL.sum();
	}

	/** The statements db-lock's watchdog threads sent through a counting data source so far. */
	static long watchdog() {
		return WATCHDOG.sum();
	}

	/** The time db-lock's watchdog threads spent in executed statements so far, in nanoseconds. */
	static long watchdogNanos() {
		return WATCHDOG_NANOS.sum();
	}

	/** A data source that counts what its connections send, on the calling thread. */
	static DataSource counting(DataSource target) {
		return proxy(DataSource.class, target, (method, result) -> (result instanceof Connection connection)
				? proxy(Connection.class, connection, StatementTally::connectionResult) : result);
	}

	private static Object connectionResult(Method method, Object result) {
		if (result instanceof CallableStatement statement) {
			return proxy(CallableStatement.class, statement, StatementTally::statementResult);
		}
		if (result instanceof PreparedStatement statement) {
			return proxy(PreparedStatement.class, statement, StatementTally::statementResult);
		}
		if (result instanceof Statement statement) {
			return proxy(Statement.class, statement, StatementTally::statementResult);
		}
		return result;
	}

	private static Object statementResult(Method method, Object result) {
		return result;
	}

	@SuppressWarnings("unchecked")
	private static <T> T proxy(Class<T> type, T target, ResultWrapper wrapper) {
		InvocationHandler handler = (proxy, method, args) -> {
			boolean sends = count(type, target, method, args);
			boolean timed = sends && ON_WATCHDOG.get();
			long start = timed ? System.nanoTime() : 0;
			try {
				Object result = method.invoke(target, args);
				return (result != null) ? wrapper.wrap(method, result) : null;
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
			finally {
				if (timed) {
					WATCHDOG_NANOS.add(System.nanoTime() - start);
				}
			}
		};
		return (T) Proxy.newProxyInstance(StatementTally.class.getClassLoader(), new Class<?>[] { type }, handler);
	}

	private static boolean count(Class<?> type, Object target, Method method, Object[] args) throws Exception {
		String name = method.getName();
		boolean sends;
		if (Statement.class.isAssignableFrom(type)) {
			sends = EXECUTES.contains(name);
		}
		else if (type == Connection.class) {
			Connection connection = (Connection) target;
			// as the driver does: autocommit is known on the client, and a changed isolation is sent
			sends = switch (name) {
				case "commit", "rollback" -> args == null && !connection.getAutoCommit();
				case "setAutoCommit" -> connection.getAutoCommit() != (Boolean) args[0];
				case "setTransactionIsolation" -> true;
				default -> false;
			};
		}
		else {
			sends = false;
		}
		if (sends) {
			COUNT.get()[0]++;
			ALL.increment();
			if (ON_WATCHDOG.get()) {
				WATCHDOG.increment();
			}
		}
		return sends;
	}

	@FunctionalInterface
	private interface ResultWrapper {

		Object wrap(Method method, Object result);

	}

}
