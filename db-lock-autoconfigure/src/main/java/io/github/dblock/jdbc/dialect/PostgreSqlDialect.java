package io.github.dblock.jdbc.dialect;

import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.util.ClassUtils;

/**
 * PostgreSQL 14 and later: one {@code INSERT ... ON CONFLICT DO UPDATE ... RETURNING} takes
 * a free key or an expired lease, or marks a held key as wanted. Time is
 * {@code clock_timestamp()}, not {@code CURRENT_TIMESTAMP}, which is frozen at the start of
 * a transaction; an acquiring statement counts its lease from
 * {@code statement_timestamp()}, when the server received it, whatever it waited for after
 * that, and compares expiry with that one value ({@code EXCLUDED.acquired_at}), so that
 * every column decides alike.
 * <p>
 * The fencing token is drawn ({@code nextval}) in the statement's {@code SELECT} list, which
 * PostgreSQL evaluates before the {@code ON CONFLICT} arbiter decides who has the key; so
 * that tokens still increase in the order the key is held, the statement's {@code WHERE}
 * takes a transaction-scoped advisory lock on the key
 * ({@code pg_advisory_xact_lock(int, int)}, with the {@linkplain #tokenOrderLock(String, String)
 * lock table's class and the key's 32-bit id}) before its {@code SELECT}
 * list is computed (a row's output expressions are computed after its {@code WHERE}), and
 * holds it until it commits. Every draw for a key thus happens while no other statement that
 * drew for the key is uncommitted: a later holder drew later. The lock is of the two-integer
 * kind, which never meets the named mode's one-{@code bigint} locks.
 *
 * @since 0.1.0
 */
public class PostgreSqlDialect extends SqlDialect {

	/** lock_not_available. */
	private static final String LOCK_NOT_AVAILABLE = "55P03";

	/** Spring maps every error of a lock row: serialization failure, deadlock, lock not available. */
	private static final SqlErrors ERRORS = new SqlErrors(Set.of());

	private static final ServerInspection INSPECTION = new PostgreSqlInspection();

	private final String acquireSql;

	/** pgjdbc's methods that cancel a connection's statement, looked up on first use. */
	private static volatile Method @Nullable [] pgjdbcCancel;

	private final int tokenLockClass;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public PostgreSqlDialect(String table) {
		super(Database.POSTGRESQL, table);
		this.tokenLockClass = tableClass(table());
		this.acquireSql = compact("""
				INSERT INTO %1$s AS l (lock_key, owner, token, acquired_at, expires_at)
				SELECT CAST(? AS VARCHAR), CAST(? AS VARCHAR), nextval('%1$s_token_seq'), %2$s, %3$s
				WHERE pg_advisory_xact_lock(?, ?) IS NOT NULL
				ON CONFLICT (lock_key) DO UPDATE SET
				  owner = CASE WHEN %4$s THEN EXCLUDED.owner ELSE l.owner END,
				  token = CASE WHEN %4$s THEN EXCLUDED.token ELSE l.token END,
				  acquired_at = CASE WHEN %4$s THEN EXCLUDED.acquired_at ELSE l.acquired_at END,
				  expires_at = CASE WHEN %4$s THEN EXCLUDED.expires_at ELSE l.expires_at END,
				  wanted_at = CASE WHEN %4$s THEN NULL ELSE EXCLUDED.acquired_at END
				RETURNING owner, token, expires_at""".formatted(table(), statementTime(), plusMicros(statementTime()),
				"l.expires_at <= EXCLUDED.acquired_at"));
	}

	/**
	 * {@inheritDoc}
	 * @return {@code true}: pgjdbc sends the cancel of a timed-out query on a connection of
	 * its own
	 */
	@Override
	public boolean cancelsQueriesFromClient() {
		return true;
	}

	/**
	 * {@inheritDoc}
	 * @return pgjdbc's CancelRequest for the connection's backend (its process id and secret
	 * key, so that it reaches that backend alone), or {@code null} if the connection is not
	 * pgjdbc's
	 */
	@Override
	public @Nullable Runnable cancelOfAbandonedStatement(Connection connection) {
		try {
			// pgjdbc's own class loader (the pool's may not see it)
			Method[] methods = pgjdbcCancel(connection.unwrap(Connection.class).getClass().getClassLoader());
			if (methods == null || !connection.isWrapperFor(methods[0].getDeclaringClass())) {
				return null;
			}
			Object executor = methods[0].invoke(connection.unwrap(methods[0].getDeclaringClass()));
			return () -> {
				try {
					methods[1].invoke(executor);
				}
				catch (ReflectiveOperationException ex) {
					// the server unreachable still: the statement ends when what it waits for ends
				}
			};
		}
		catch (ReflectiveOperationException | SQLException | LinkageError ex) {
			return null;
		}
	}

	/**
	 * pgjdbc's {@code BaseConnection.getQueryExecutor()} and {@code QueryExecutor.sendQueryCancel()}
	 * from a class loader, looked up once when found, or {@code null} where it has no pgjdbc.
	 */
	private static Method @Nullable [] pgjdbcCancel(@Nullable ClassLoader loader) throws ReflectiveOperationException {
		Method[] methods = pgjdbcCancel;
		if (methods == null || methods[0].getDeclaringClass().getClassLoader() != loader) {
			if (!ClassUtils.isPresent("org.postgresql.core.BaseConnection", loader)) {
				return null;
			}
			methods = new Method[] {
					ClassUtils.forName("org.postgresql.core.BaseConnection", loader).getMethod("getQueryExecutor"),
					ClassUtils.forName("org.postgresql.core.QueryExecutor", loader).getMethod("sendQueryCancel") };
			pgjdbcCancel = methods;
		}
		return methods;
	}

	@Override
	public ServerInspection inspection() {
		return INSPECTION;
	}

	@Override
	public SqlErrors errors() {
		return ERRORS;
	}

	@Override
	public String now() {
		return "clock_timestamp()";
	}

	/**
	 * {@code statement_timestamp()}: {@code clock_timestamp()} is read when the expression is
	 * evaluated, which for an acquiring statement is after its wait for the key's advisory
	 * lock.
	 */
	@Override
	public String statementTime() {
		return "statement_timestamp()";
	}

	@Override
	public String plusMicros(String time) {
		return time + " + ? * INTERVAL '1 microsecond'";
	}

	/**
	 * Skips rows a renewal has locked; the outer condition checks expiry once more. The
	 * clock is read once for the subquery ({@code (SELECT clock_timestamp())}, an InitPlan),
	 * so that the expiry index applies; the rows found are deleted by their {@code ctid}.
	 */
	@Override
	public String deleteExpiredSql(String table) {
		return ("DELETE FROM %1$s WHERE ctid = ANY(ARRAY(SELECT ctid FROM %1$s WHERE expires_at <= (SELECT %2$s) "
				+ "ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)) AND expires_at <= %2$s").formatted(table, now());
	}

	@Override
	protected String acquireSql() {
		return this.acquireSql;
	}

	/**
	 * Runs {@link #acquireSql()} with the key, owner, lease, and the advisory lock's class
	 * and key id.
	 */
	@Override
	public Optional<AcquiredRow> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		Object[] parameters = { key, owner, micros(lease), null, null };
		System.arraycopy(tokenOrderLock(table(), key), 0, parameters, 3, 2);
		return jdbc
			.query(acquireSql(),
					(rs, i) -> new OwnedRow(rs.getString("owner"), rs.getLong("token"), readInstant(rs, "expires_at")),
					parameters)
			.stream()
			.filter((row) -> row.owner().equals(owner))
			.findFirst()
			.map(OwnedRow::acquired);
	}

	/** The transaction-scoped advisory lock of {@link #tokenOrderLock(String, String)}. */
	@Override
	public String tokenOrderCondition() {
		return "pg_advisory_xact_lock(?, ?) IS NOT NULL AND ";
	}

	@Override
	public String tokenOrderLockSql() {
		return "SELECT pg_advisory_xact_lock(?, ?)";
	}

	/**
	 * The two arguments of the {@code pg_advisory_xact_lock(int, int)} that orders the draws
	 * of a key's fencing tokens in a table of this dialect (the lease table, the read/write
	 * holders' table): the table's class, the first 4 bytes of the SHA-256 digest of its
	 * name, so that each table of a database has a class of its own; and the key's id within
	 * it, the first 4 bytes of its {@linkplain #lockId(String) 64-bit id}. Two keys with one
	 * id order their draws together, nothing worse.
	 * @param table the table whose tokens the lock orders
	 * @param key the stored key
	 * @return the class and the key's id
	 */
	@Override
	public Object[] tokenOrderLock(String table, String key) {
		int tableClass = (table.equals(table())) ? this.tokenLockClass : tableClass(table);
		return new Object[] { tableClass, (int) (lockId(key) >>> 32) };
	}

	private static int tableClass(String table) {
		return java.nio.ByteBuffer.wrap(sha256(table)).getInt();
	}

	/**
	 * In the read/write holders' table, the shared form of the key's token-order lock
	 * ({@code pg_advisory_xact_lock_shared}): every reader's and writer's insert takes the
	 * exclusive one, so that a take-over of the key waits for the guarded commit.
	 */
	@Override
	public String commitGuardCondition(String table) {
		return isReadWriteTable(table) ? " AND pg_advisory_xact_lock_shared(?, ?) IS NOT NULL" : "";
	}

	@Override
	public Object @Nullable [] commitGuardParameters(String table, String key) {
		return isReadWriteTable(table) ? tokenOrderLock(table, key) : null;
	}

	private boolean isReadWriteTable(String table) {
		return table.equals(table() + "_rw");
	}

	@Override
	public boolean updateReturnsRows() {
		return true;
	}

	@Override
	public String insertReturning(String insert, String columns) {
		return insert + " RETURNING " + columns;
	}

	/** {@code ON CONFLICT (lock_key) DO NOTHING}. */
	@Override
	public String insertUnlessKeyExists(String table, String columns, String values) {
		return "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ") ON CONFLICT (lock_key) DO NOTHING";
	}

	/** {@code ON CONFLICT (lock_key) DO UPDATE ... WHERE ... RETURNING owner}. */
	@Override
	public String claimIntentSql(String intents, String expiresAt) {
		return "INSERT INTO " + intents + " AS c (lock_key, owner, expires_at) VALUES (?, ?, " + expiresAt
				+ ") ON CONFLICT (lock_key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at "
				+ "WHERE c.owner = EXCLUDED.owner OR c.expires_at <= " + now() + " RETURNING c.owner";
	}

	/** {@code ON CONFLICT DO NOTHING}: no error, so none in the server's log, for a key taken. */
	@Override
	public String insertUnlessPrimaryKeyExists(String table, String columns, String values) {
		return "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ") ON CONFLICT DO NOTHING";
	}

	/** A data-modifying {@code WITH}: key, owner, key, owner, token. */
	@Override
	public String releaseWriterSql(String holders, String intents) {
		return "WITH i AS (DELETE FROM " + intents + " WHERE lock_key = ? AND owner = ?) DELETE FROM " + holders
				+ " WHERE lock_key = ? AND owner = ? AND token = ?";
	}

	@Override
	public Object[] releaseWriterParameters(String key, String owner, long token) {
		return new Object[] { key, owner, key, owner, token };
	}

	/**
	 * A subquery with {@code FOR UPDATE} is not flattened: {@code nextval} runs once the
	 * key's row is locked.
	 */
	@Override
	public String fairEnqueueSql(String queue, String keys, String lease) {
		return compact("""
				INSERT INTO %1$s (ticket, lock_key, owner, expires_at)
				SELECT nextval('%2$s_token_seq'), k.lock_key, ?, %3$s
				FROM (SELECT lock_key FROM %4$s WHERE lock_key = ? FOR UPDATE) k RETURNING ticket""")
			.formatted(queue, table(), lease, keys);
	}

	/**
	 * pgjdbc sends the statements of one string together, before one {@code Sync}: in
	 * autocommit, one round trip (left to pgjdbc, a transaction of its own costs more round
	 * trips). The transaction names its isolation, whatever the session's default (a
	 * {@code REPEATABLE READ} snapshot would be taken when the first statement starts,
	 * before it waits for a lock); a statement that fails leaves it aborted, for the caller
	 * to roll back.
	 */
	@Override
	public String sentTogether(String... statements) {
		return "BEGIN ISOLATION LEVEL READ COMMITTED; " + String.join("; ", statements) + "; COMMIT";
	}

	/**
	 * The insert alone: {@code ON CONFLICT DO NOTHING} waits only for a transaction still
	 * inserting the key, never for a row another transaction has locked.
	 */
	@Override
	public void ensureKeyRow(JdbcOperations jdbc, String key) {
		insertKeyRow(jdbc, key);
	}

	/**
	 * An error aborts PostgreSQL's whole transaction, so the wait runs inside a savepoint:
	 * {@code SET LOCAL lock_timeout} (milliseconds), {@code FOR UPDATE}, the setting put back;
	 * on a timeout (or any failure) the savepoint is rolled back, which leaves the caller's
	 * work before it and the setting as they were. Zero is {@code SKIP LOCKED}, which raises
	 * no error.
	 */
	@Override
	public boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		if (waitMillis <= 0) {
			return !jdbc.queryForList(selectKeyRowSql() + " FOR UPDATE SKIP LOCKED", Integer.class, key).isEmpty();
		}
		return Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) (con) -> {
			Savepoint savepoint = con.setSavepoint();
			try {
				String previous = setLockTimeout(con, waitMillis + "ms", true);
				boolean locked;
				try (PreparedStatement lock = con.prepareStatement(selectKeyRowSql() + " FOR UPDATE")) {
					lock.setString(1, key);
					try (ResultSet rs = lock.executeQuery()) {
						locked = rs.next();
					}
				}
				setLockTimeout(con, previous, true);
				con.releaseSavepoint(savepoint);
				return locked;
			}
			catch (SQLException ex) {
				try {
					con.rollback(savepoint);
				}
				catch (SQLException cleanup) {
					// the connection failed (a network timeout closes it): the statement's own failure says why
					ex.addSuppressed(cleanup);
					throw ex;
				}
				if (LOCK_NOT_AVAILABLE.equals(ex.getSQLState())) {
					return false;
				}
				throw ex;
			}
		}));
	}

	/** Sets {@code lock_timeout}, returning the value it had. */
	private static String setLockTimeout(Connection con, String value, boolean local) throws SQLException {
		try (PreparedStatement set = con
			.prepareStatement("SELECT current_setting('lock_timeout'), set_config('lock_timeout', ?, ?)")) {
			set.setString(1, value);
			set.setBoolean(2, local);
			try (ResultSet rs = set.executeQuery()) {
				rs.next();
				return rs.getString(1);
			}
		}
	}

	/**
	 * {@code pg_try_advisory_lock} for no wait; else {@code pg_advisory_lock} under the
	 * session's {@code lock_timeout} (milliseconds), put back after it.
	 */
	@Override
	public boolean namedLock(JdbcOperations jdbc, String key, long waitMillis) {
		long id = lockId(key);
		if (waitMillis <= 0) {
			return Boolean.TRUE.equals(jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, id));
		}
		return Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) (con) -> {
			String previous = setLockTimeout(con, waitMillis + "ms", false);
			boolean locked;
			try (PreparedStatement lock = con.prepareStatement("SELECT pg_advisory_lock(?)")) {
				lock.setLong(1, id);
				lock.executeQuery().close();
				locked = true;
			}
			catch (SQLException ex) {
				if (!LOCK_NOT_AVAILABLE.equals(ex.getSQLState())) {
					try {
						setLockTimeout(con, previous, false);
					}
					catch (SQLException cleanup) {
						// the connection failed (a network timeout closes it): the statement's own failure says why
						ex.addSuppressed(cleanup);
					}
					throw ex;
				}
				locked = false;
			}
			setLockTimeout(con, previous, false);
			return locked;
		}));
	}

	@Override
	public boolean namedUnlock(JdbcOperations jdbc, String key) {
		return Boolean.TRUE.equals(jdbc.queryForObject("SELECT pg_advisory_unlock(?)", Boolean.class, lockId(key)));
	}

	@Override
	public String tokenSequenceSql() {
		return "SELECT nextval('" + table() + "_token_seq')";
	}

	/**
	 * The advisory lock's 64-bit id for a key: the first 8 bytes of the SHA-256 digest of the
	 * lock table's name and the key. Two keys with one id would exclude each other, nothing
	 * worse; with 64 bits, among a million keys in use the chance of any such pair is about
	 * 3 in 100 million.
	 */
	long lockId(String key) {
		return java.nio.ByteBuffer.wrap(sha256(table() + ":" + key)).getLong();
	}

}
