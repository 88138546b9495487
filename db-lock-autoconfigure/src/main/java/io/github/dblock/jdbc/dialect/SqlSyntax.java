package io.github.dblock.jdbc.dialect;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Collections;

import org.jspecify.annotations.Nullable;

/**
 * The SQL text of one database on one lock table: its names, its time expressions, and
 * the fragments and capabilities in which its statements differ from another database's,
 * from which the statements of every mode ({@link LeaseStatements},
 * {@link ReadWriteStatements}, {@link FairQueueStatements}, {@link LockHistoryStatements})
 * are built once. Expiry is always compared with the database's clock, written as
 * {@link #now()}; every value is a bind parameter, the table's name is validated. The
 * defaults are standard SQL; a database overrides what it writes otherwise.
 *
 * @since 0.1.0
 */
public abstract class SqlSyntax {

	/** The digest {@link #sha256(String)} copies; never used itself. */
	private static final java.security.MessageDigest SHA_256;

	static {
		try {
			SHA_256 = java.security.MessageDigest.getInstance("SHA-256");
		}
		catch (java.security.NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform has SHA-256", ex);
		}
	}

	private final Database database;

	private final String table;

	/**
	 * Creates the SQL of a database on a lock table.
	 * @param database the database whose SQL it is
	 * @param table the lock table's name
	 * @throws IllegalArgumentException if the table name is not a plain identifier
	 */
	protected SqlSyntax(Database database, String table) {
		this.database = database;
		this.table = SqlIdentifiers.requireTableName(table);
	}

	/**
	 * The dialect's name, as given to {@code db-lock.dialect}, also the folder of its
	 * migrations under {@code db/db-lock/}.
	 * @return the name
	 */
	public final String name() {
		return this.database.id();
	}

	/**
	 * The database whose SQL this is.
	 * @return the database
	 */
	public final Database database() {
		return this.database;
	}

	/**
	 * The lock table's name.
	 * @return the name
	 */
	public final String table() {
		return this.table;
	}

	/**
	 * The table of the transaction mode's rows, one per key, which it locks: the lock
	 * table's name followed by {@code _keys}.
	 * @return the table's name
	 */
	public final String keyTable() {
		return this.table + "_keys";
	}

	/**
	 * The table of per-key fencing-token counters, where the database has no sequences
	 * (MySQL): the lock table's name followed by {@code _key_tokens}.
	 * @return the table's name
	 */
	public final String tokenTable() {
		return this.table + "_key_tokens";
	}

	/**
	 * The SQL expression for the database's current time, in the type of the table's time
	 * columns.
	 * @return the expression
	 */
	public abstract String now();

	/**
	 * The SQL expression for the database's time when it received the statement, in the type
	 * of the table's time columns: the start of the lease an acquiring statement writes, so
	 * that a statement that waited in the server after its client gave up writes no lease
	 * that ends later than one lease after it was sent. Here {@link #now()}, which is read
	 * once at a statement's start.
	 * @return the expression
	 */
	public String statementTime() {
		return now();
	}

	/**
	 * The SQL expression for a time plus a bind parameter in microseconds.
	 * @param time a time expression
	 * @return the expression, with one {@code ?}
	 */
	public abstract String plusMicros(String time);

	/**
	 * The statement that deletes at most {@code ?} rows of a table whose lease has ended
	 * ({@code expires_at}), checking expiry again for every row it deletes so that a lease
	 * renewed a moment ago stays.
	 * @param table the table
	 * @return the SQL, with one {@code ?} for the limit
	 */
	public abstract String deleteExpiredSql(String table);

	/**
	 * An {@code INSERT} of one row that does nothing where the row's key exists, where the
	 * database can say so in the statement; here a plain {@code INSERT}, which fails with a
	 * duplicate key.
	 * @param table the table, whose primary key is {@code lock_key}
	 * @param columns the columns, separated by commas
	 * @param values their values, separated by commas
	 * @return the SQL
	 */
	public String insertUnlessKeyExists(String table, String columns, String values) {
		return "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ")";
	}

	/**
	 * A writer's claim of a key's intent in one statement, where the database can say it in
	 * one: inserts the intent, or takes the key's row if it is this owner's or has ended
	 * (locking it either way until the transaction ends), returning the intent's owner: one
	 * row, whose owner is this one if the claim took the intent (a database whose statement
	 * returns only a row it changed returns none when the intent is another's).
	 * @param intents the intents' table, with {@code lock_key} (its primary key),
	 * {@code owner} and {@code expires_at}
	 * @param expiresAt the new end, with the lease as its one parameter
	 * @return the SQL, with the key, the owner and the lease as parameters, or {@code null}
	 * (the default) where it takes an insert and an update
	 */
	public @Nullable String claimIntentSql(String intents, String expiresAt) {
		return null;
	}

	/**
	 * An {@code INSERT} of one row that does nothing where a row with the same primary key
	 * exists, whatever the table's primary key, where the database can say so in the
	 * statement; here a plain {@code INSERT}, which fails with a duplicate key. Either way
	 * the row is inserted only if the key is free (its update count is 1).
	 * @param table the table
	 * @param columns the columns, separated by commas
	 * @param values their values, separated by commas
	 * @return the SQL
	 */
	public String insertUnlessPrimaryKeyExists(String table, String columns, String values) {
		return "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ")";
	}

	/**
	 * An {@code INSERT} that returns columns of the rows it inserted, where the database
	 * can.
	 * @param insert the {@code INSERT}
	 * @param columns the columns to return, separated by commas
	 * @return the SQL, or {@code null} where the database cannot (the default)
	 */
	public @Nullable String insertReturning(String insert, String columns) {
		return null;
	}

	/**
	 * Whether an {@code UPDATE} can return the rows it changed ({@code RETURNING}).
	 * @return here {@code false}
	 */
	public boolean updateReturnsRows() {
		return false;
	}

	/**
	 * The value a holder row's {@code INSERT} writes in its {@code token} column, in the
	 * read/write modes' table.
	 * @return the SQL expression, or {@code null} where the column is the database's
	 * {@code AUTO_INCREMENT}, left out of the insert; here the lease tokens' sequence
	 */
	public @Nullable String holderTokenValue() {
		return "nextval('" + this.table + "_token_seq')";
	}

	/**
	 * Whether a holder row's token is drawn after its insert, which writes a placeholder
	 * ({@code 0}), by a statement of its own.
	 * @param table the table the row is in
	 * @param alsoWhere what the draw's {@code WHERE} adds after the key and owner (empty, or
	 * starting with {@code AND}): a row it does not match keeps its placeholder
	 * @return the statement that draws the token of a key's and owner's row and returns its
	 * {@code token} and {@code expires_at} (parameters key, owner, then those of
	 * {@code alsoWhere}), or {@code null} where the insert draws it (the default)
	 */
	public @Nullable String drawTokenAfterInsertSql(String table, String alsoWhere) {
		return null;
	}

	/**
	 * The condition an acquiring {@code INSERT ... SELECT} puts first in its {@code WHERE}
	 * so that the tokens of a key are drawn in the order the key is held.
	 * @return the condition followed by {@code AND}, with the parameters of
	 * {@link #tokenOrderLock(String, String)}; here empty
	 */
	public String tokenOrderCondition() {
		return "";
	}

	/**
	 * The statement that takes, for the rest of the transaction, the lock of
	 * {@link #tokenOrderCondition()} alone.
	 * @return the SQL, with the parameters of {@link #tokenOrderLock(String, String)}, or
	 * {@code null} where there is no such lock (the default)
	 */
	public @Nullable String tokenOrderLockSql() {
		return null;
	}

	/**
	 * The parameters of the lock of {@link #tokenOrderCondition()} for a key of a table.
	 * @param table the table whose tokens the lock orders
	 * @param key the stored key
	 * @return the parameters, or {@code null} where there is no such lock (the default)
	 */
	public Object @Nullable [] tokenOrderLock(String table, String key) {
		return null;
	}

	/**
	 * The clause that makes a {@code SELECT} take a shared lock on the rows it returns, kept
	 * until the transaction ends: a row's update or delete by another transaction waits for
	 * it.
	 * @return the clause, with a leading space ({@code FOR SHARE} here), or {@code null} where
	 * the database cannot take one
	 */
	public @Nullable String sharedRowLock() {
		return " FOR SHARE";
	}

	/**
	 * The database's time when a statement runs, in a transaction that may have begun long
	 * before it: {@link #now()} here.
	 * @return the SQL expression, or {@code null} where the database has none (its time is
	 * then read by the JVM, which must be the database's)
	 */
	public @Nullable String statementNow() {
		return now();
	}

	/**
	 * What the commit guard's check adds to each row's condition in a table: a lock that the
	 * table's take-overs must wait for, where they do not write the stale row; here nothing.
	 * @param table the table
	 * @return the condition, starting with {@code AND}, with the parameters of
	 * {@link #commitGuardParameters(String, String)}, or an empty string
	 */
	public String commitGuardCondition(String table) {
		return "";
	}

	/**
	 * The parameters of {@link #commitGuardCondition(String)} for a row's key.
	 * @param table the table
	 * @param key the row's key
	 * @return the parameters, or {@code null} where there is no condition (the default)
	 */
	public Object @Nullable [] commitGuardParameters(String table, String key) {
		return null;
	}

	/**
	 * The commit guard's check of {@code count} rows of a table, taking the
	 * {@linkplain #sharedRowLock() shared row lock} of each, in key order: {@code lock_key}, {@code owner},
	 * the token column, {@code expires_at} and, where there is a {@link #statementNow()},
	 * {@code live} ({@code 1} if the lease has not ended); parameters, row after row: key,
	 * owner, token, then that row's {@link #commitGuardParameters(String, String)}.
	 * @param table the table
	 * @param tokenColumn its token column
	 * @param count the number of rows
	 * @return the SQL
	 */
	public String commitGuardSql(String table, String tokenColumn, int count) {
		StringBuilder sql = new StringBuilder("SELECT lock_key, owner, ").append(tokenColumn).append(", expires_at");
		String now = statementNow();
		if (now != null) {
			sql.append(", CASE WHEN expires_at > ").append(now).append(" THEN 1 ELSE 0 END AS live");
		}
		sql.append(" FROM ").append(table).append(" WHERE ");
		for (int i = 0; i < count; i++) {
			sql.append((i > 0) ? " OR " : "").append("(lock_key = ? AND owner = ? AND ").append(tokenColumn).append(" = ?")
				.append(commitGuardCondition(table)).append(")");
		}
		// in key order, the order in which the batched renewals' index scans lock rows: not the opposite order
		return sql.append(" ORDER BY lock_key").append(sharedRowLock()).toString();
	}

	/**
	 * What a {@code SELECT} of values without a table needs after its list for a
	 * {@code WHERE} to follow.
	 * @return here nothing
	 */
	public String fromNoTable() {
		return "";
	}

	/**
	 * A key's bind parameter where its type must be told (in a {@code SELECT} list).
	 * @return here a plain {@code ?}
	 */
	public String keyParameter() {
		return "?";
	}

	/**
	 * An owner's bind parameter where its type must be told (in a {@code SELECT} list).
	 * @return here a plain {@code ?}
	 */
	public String ownerParameter() {
		return "?";
	}

	/**
	 * The statement that deletes a writer's row and its intent in one statement, with the
	 * parameters of {@link #releaseWriterParameters(String, String, long)}.
	 * @param holders the holders' table
	 * @param intents the intents' table
	 * @return the SQL, or {@code null} where the database has no such statement (the
	 * default)
	 */
	public @Nullable String releaseWriterSql(String holders, String intents) {
		return null;
	}

	/**
	 * The parameters of {@link #releaseWriterSql(String, String)}.
	 * @param key the key
	 * @param owner the writer
	 * @param token the writer's token
	 * @return here key, owner, token
	 */
	public Object[] releaseWriterParameters(String key, String owner, long token) {
		return new Object[] { key, owner, token };
	}

	/**
	 * The statement that enqueues a fair ticket, with the parameters owner, lease in
	 * microseconds and key: an {@code INSERT ... SELECT} that locks the key's row of the
	 * keys table ({@code FOR UPDATE}) before it draws the ticket's number, and keeps it
	 * until it commits.
	 * @param queue the queue table
	 * @param keys the fair keys' table
	 * @param lease the SQL expression of the ticket's end
	 * @return the SQL, returning the ticket's number unless
	 * {@link #ticketIsGeneratedKey()}
	 * @throws IllegalArgumentException if the fair mode has no statements for this database
	 * (the default)
	 */
	public String fairEnqueueSql(String queue, String keys, String lease) {
		throw new IllegalArgumentException("The fair mode has no statements for " + this);
	}

	/**
	 * Statements as one transaction at {@code READ COMMITTED} that begins and commits
	 * itself, in one string that the driver sends in one round trip ({@link
	 * OneTransaction#sendTogether}): each statement takes its snapshot when it starts, after
	 * the locks its predecessors waited for, whatever the session's default isolation.
	 * @param statements the statements, without a terminating semicolon
	 * @return the string, or {@code null} (the default) where the driver sends one statement
	 * at a time
	 */
	public @Nullable String sentTogether(String... statements) {
		return null;
	}

	/**
	 * Statements that each commit before the next one starts (each in autocommit, its
	 * transaction and snapshot its own), in one string that the driver sends in one round
	 * trip ({@link OneTransaction#sendTogether}): the order and the commits of separate
	 * round trips, without their waits. The first statement that fails ends the string and
	 * the failure; those before it have committed.
	 * @param statements the statements, without a terminating semicolon
	 * @return the string, or {@code null} (the default) where the database cannot run
	 * statements in autocommit from one string
	 */
	public @Nullable String sentInSequence(String... statements) {
		return null;
	}

	/**
	 * An expression of the number of rows that the statement before the one that evaluates
	 * it, {@linkplain #sentInSequence in sequence}, inserted, updated or deleted.
	 * @return the SQL, or {@code null} (the default) where there is none
	 */
	public @Nullable String changedRows() {
		return null;
	}

	/**
	 * Whether a fair ticket's number comes back as the insert's generated key, not as a
	 * result.
	 * @return here {@code false}
	 */
	public boolean ticketIsGeneratedKey() {
		return false;
	}

	/**
	 * Reads a time column written by this dialect.
	 * @param rs the result set, on a row
	 * @param column the column label
	 * @return the instant
	 * @throws SQLException if the column cannot be read
	 */
	public Instant readInstant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, OffsetDateTime.class).toInstant();
	}

	/**
	 * The bind parameter of an instant for a time column of this database's lock tables.
	 * @param instant the instant
	 * @return the parameter: here an {@link OffsetDateTime} in UTC
	 */
	public Object instantParameter(Instant instant) {
		return instant.atOffset(java.time.ZoneOffset.UTC);
	}

	/**
	 * A duration in whole microseconds, the unit of every duration parameter.
	 * @param duration the duration
	 * @return its microseconds, the nanoseconds below cut
	 */
	public static long micros(Duration duration) {
		return duration.toNanos() / 1000;
	}

	/**
	 * A list of {@code count} bind parameters.
	 * @param count how many
	 * @return {@code ?, ?, ...}
	 */
	public static String placeholders(int count) {
		return String.join(", ", Collections.nCopies(count, "?"));
	}

	/**
	 * SQL on one line, without the indentation of a text block: drivers that parse a
	 * statement on every execution read fewer characters.
	 * @param sql the SQL
	 * @return the SQL with each run of white space replaced by one space
	 */
	protected static String compact(String sql) {
		return sql.strip().replaceAll("\\s+", " ");
	}

	/**
	 * The SHA-256 digest of a text's UTF-8 bytes.
	 * @param text the text
	 * @return the digest
	 */
	protected static byte[] sha256(String text) {
		return newSha256().digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
	}

	/** A fresh SHA-256 digest: a copy of one made once where the provider copies digests, as the JDK's does. */
	private static java.security.MessageDigest newSha256() {
		try {
			return (java.security.MessageDigest) SHA_256.clone();
		}
		catch (CloneNotSupportedException ex) {
			try {
				return java.security.MessageDigest.getInstance("SHA-256");
			}
			catch (java.security.NoSuchAlgorithmException notFound) {
				throw new IllegalStateException("Every Java platform has SHA-256", notFound);
			}
		}
	}

	@Override
	public String toString() {
		return name() + " dialect on table " + this.table;
	}

}
