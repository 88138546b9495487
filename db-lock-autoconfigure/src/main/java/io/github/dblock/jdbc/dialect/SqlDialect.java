package io.github.dblock.jdbc.dialect;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * One database's SQL on one lock table: its text ({@link SqlSyntax}), the statements of
 * each mode built from it once, and the few operations whose sequence of statements is the
 * database's own (taking a key, locking a key's row, named locks, counted tokens). What the
 * server is set up to do is told by its {@link #inspection()}, and which of its errors mean
 * contention by its {@link #errors()}. A database is one subclass, listed in
 * {@link Database}.
 *
 * @since 0.1.0
 */
public abstract class SqlDialect extends SqlSyntax {

	private final LeaseStatements leaseStatements;

	/**
	 * Creates a dialect for a lock table.
	 * @param database the database whose SQL it is
	 * @param table the lock table's name
	 * @throws IllegalArgumentException if the table name is not a plain identifier
	 */
	protected SqlDialect(Database database, String table) {
		super(database, table);
		this.leaseStatements = new LeaseStatements(this);
	}

	/**
	 * Whether the driver enforces a JDBC query timeout from the client, by sending a cancel
	 * on a connection of its own that the statement's thread then waits for (PostgreSQL's
	 * pgjdbc, whose cancel, with the server unreachable, takes up to its
	 * {@code cancelSignalTimeout}, 10 s by default, and which schedules a timer task for
	 * every statement that has one). The lock statements then get no query timeout: their
	 * network timeout ends a statement the server does not answer, and db-lock sends its
	 * cancel itself ({@link #cancelOfAbandonedStatement}); where the driver has the server
	 * enforce it (MariaDB Connector/J's {@code max_statement_time}, H2), they get one too,
	 * the network timeout in whole seconds rounded up.
	 * @return {@code false} here
	 * @since 0.1.0
	 */
	public boolean cancelsQueriesFromClient() {
		return false;
	}

	/**
	 * What ends, in the server, a statement of the connection if its client gives up on it
	 * when its network timeout passes (the driver closes the connection then): a server that
	 * does not notice a closed client while the statement waits for a lock would otherwise run
	 * it on, holding a connection slot, until what it waits for ends. Asked before the
	 * statement runs (no I/O), run off the caller's thread only if it timed out; it may fail
	 * (the server unreachable), which changes nothing.
	 * @param connection the connection about to run the statement
	 * @return the task, or {@code null} (here) where nothing is sent
	 * @since 0.1.0
	 */
	public @Nullable Runnable cancelOfAbandonedStatement(Connection connection) {
		return null;
	}

	/**
	 * The lease mode's statements on the lock table.
	 * @return the statements
	 */
	public final LeaseStatements leases() {
		return this.leaseStatements;
	}

	/**
	 * The read/write modes' statements.
	 * @return new statements on this dialect's tables
	 */
	public ReadWriteStatements readWriteStatements() {
		return new ReadWriteStatements(this);
	}

	/**
	 * The fair mode's statements.
	 * @return new statements on this dialect's tables
	 * @throws IllegalArgumentException if the fair mode has no statements for this database
	 */
	public FairQueueStatements fairQueueStatements() {
		return new FairQueueStatements(this);
	}

	/**
	 * What the server is set up to do, read from it at start-up and when a mode asks
	 * whether it can run.
	 * @return the inspection; here one that finds nothing to report but the absence of
	 * named locks
	 */
	public ServerInspection inspection() {
		return new ServerInspection(name());
	}

	/**
	 * Which of the database's errors mean contention.
	 * @return the mapping
	 */
	public abstract SqlErrors errors();

	/**
	 * The statement that takes a free or expired key, with the parameters key, owner and
	 * lease in microseconds, and marks a key held by another owner as wanted
	 * ({@code wanted_at}); a take-over clears the mark. Used by {@link #tryAcquire}, it
	 * returns the columns {@code owner}, {@code token} and {@code expires_at} of the row it
	 * wrote or found; a dialect that overrides {@code tryAcquire} returns the first
	 * statement it runs.
	 * @return the SQL
	 */
	protected abstract String acquireSql();

	/**
	 * Takes a free or expired key in as few statements as the database allows; on a key
	 * another owner holds, marks it as wanted.
	 * @param jdbc runs the statements, each in autocommit
	 * @param key the lock key
	 * @param owner the owner id for this acquisition
	 * @param lease how long the lease lasts
	 * @return the row taken, or empty when another owner holds the key
	 */
	public Optional<AcquiredRow> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		return jdbc
			.query(acquireSql(),
					(rs, i) -> new OwnedRow(rs.getString("owner"), rs.getLong("token"), readInstant(rs, "expires_at")),
					key, owner, micros(lease))
			.stream()
			.filter((row) -> row.owner().equals(owner))
			.findFirst()
			.map(OwnedRow::acquired);
	}

	/**
	 * Makes sure a key has its row in {@link #keyTable()}, on a connection in autocommit that
	 * is not the caller's: its own short transaction, so that no caller's transaction ever
	 * locks a gap where the row would go. Here reads first, so that a row that exists is
	 * never written, nor waited for while another transaction has it locked.
	 * @param jdbc runs the statements, each in autocommit
	 * @param key the key
	 */
	public void ensureKeyRow(JdbcOperations jdbc, String key) {
		if (jdbc.queryForList("SELECT 1 FROM " + keyTable() + " WHERE lock_key = ?", Integer.class, key).isEmpty()) {
			insertKeyRow(jdbc, key);
		}
	}

	/**
	 * Runs the insert of a key's row unless it exists: a duplicate key is a row that exists.
	 * @param jdbc runs it, in autocommit
	 * @param key the key
	 */
	protected final void insertKeyRow(JdbcOperations jdbc, String key) {
		try {
			jdbc.update(insertKeyRowSql(), key);
		}
		catch (DuplicateKeyException ex) {
			// inserted meanwhile by another caller
		}
	}

	/**
	 * The statement that inserts a key's row unless it exists, with the key as its parameter.
	 * @return the SQL
	 */
	protected final String insertKeyRowSql() {
		return insertUnlessKeyExists(keyTable(), "lock_key", "?");
	}

	/**
	 * Locks a key's row (which exists) in the transaction of the connection, waiting while
	 * another transaction holds it, at most {@code waitMillis} and never longer (a database
	 * that counts waits in whole seconds waits the whole seconds below it; zero is one look
	 * with {@code SKIP LOCKED}, which raises no error). A lock-wait timeout rolls back only
	 * the statement, never the caller's work before it.
	 * @param jdbc runs the statements on the caller's transactional connection
	 * @param key the key
	 * @param waitMillis how long to wait at most; 0 for not at all
	 * @return whether the row is locked, {@code false} if another transaction holds it
	 * @throws org.springframework.dao.DataAccessException if the statement fails, a
	 * lock-wait timeout included where the database reports it as an error (see
	 * {@link SqlErrors#isLockWaitTimeout(Throwable)})
	 */
	public boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		String sql = selectKeyRowSql() + ((waitMillis <= 0) ? " FOR UPDATE SKIP LOCKED" : " FOR UPDATE WAIT "
				+ java.math.BigDecimal.valueOf(waitMillis, 3).toPlainString());
		return !jdbc.queryForList(sql, Integer.class, key).isEmpty();
	}

	/**
	 * The query of a key's row for {@link #lockKeyRow}, without its locking clause.
	 * @return the SQL, with the key as its parameter
	 */
	protected final String selectKeyRowSql() {
		return "SELECT 1 FROM " + keyTable() + " WHERE lock_key = ?";
	}

	/**
	 * The query that draws a fencing token of the transaction or named mode from a
	 * sequence, on the connection that holds the lock: a sequence is not transactional, so a
	 * transaction that rolls back or a holder that dies never gives its token back. Values
	 * increase in the order they are drawn, and a holder draws while it holds the key: per
	 * key, tokens increase with every holder. The lease tokens' sequence by default.
	 * @return the SQL, or {@code null} where the database has no sequences: tokens are then
	 * counted per key with {@link #nextCountedToken}
	 */
	public @Nullable String tokenSequenceSql() {
		return "SELECT NEXT VALUE FOR " + table() + "_token_seq";
	}

	/**
	 * Draws a key's next fencing token of the transaction or named mode: from
	 * {@link #tokenSequenceSql()}, or where there is no sequence with
	 * {@link #nextCountedToken}.
	 * @param jdbc runs the statement on the connection that holds the lock (for a counter,
	 * in autocommit)
	 * @param key the stored key
	 * @param named whether for the named mode, else the transaction mode
	 * @return the token
	 */
	public final long drawToken(JdbcOperations jdbc, String key, boolean named) {
		String sequence = tokenSequenceSql();
		return (sequence != null) ? Objects.requireNonNull(jdbc.queryForObject(sequence, Long.class))
				: nextCountedToken(jdbc, key, named);
	}

	/**
	 * Counts one of a key's fencing tokens one up in {@link #tokenTable()}, in one statement
	 * in autocommit (committed at once), and returns it, where {@link #tokenSequenceSql()}
	 * has no sequence. Called by the key's holder while it holds the key in that mode.
	 * @param jdbc runs the statement, in autocommit
	 * @param key the stored key
	 * @param named the named mode's counter ({@code named_token}), else the transaction mode's
	 * ({@code token})
	 * @return the new token
	 * @throws UnsupportedOperationException where tokens come from a sequence (the default)
	 */
	public long nextCountedToken(JdbcOperations jdbc, String key, boolean named) {
		throw new UnsupportedOperationException(name() + " draws tokens from a sequence");
	}

	/**
	 * Takes the server's named lock for a key on the connection (in autocommit), waiting at
	 * most {@code waitMillis} (or the whole seconds below it, where the server counts
	 * seconds).
	 * @param jdbc runs the statements on the connection that will hold the lock
	 * @param key the stored key
	 * @param waitMillis how long to wait at most; 0 for not at all
	 * @return whether it was taken
	 * @throws UnsupportedOperationException where the database has no named locks (the
	 * default)
	 */
	public boolean namedLock(JdbcOperations jdbc, String key, long waitMillis) {
		throw new UnsupportedOperationException(inspection().namedLocksUnavailable(jdbc));
	}

	/**
	 * Releases the named lock of a key held by the connection.
	 * @param jdbc runs the statement on the connection that holds the lock
	 * @param key the stored key
	 * @return whether the connection held it
	 * @throws UnsupportedOperationException where the database has no named locks (the
	 * default)
	 */
	public boolean namedUnlock(JdbcOperations jdbc, String key) {
		throw new UnsupportedOperationException(inspection().namedLocksUnavailable(jdbc));
	}

	/** A row an acquiring statement wrote or found, with its owner. */
	record OwnedRow(String owner, long token, Instant expiresAt) {

		AcquiredRow acquired() {
			return new AcquiredRow(this.token, this.expiresAt);
		}

	}

}
