package io.github.dblock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * The SQL of one database. Expiry is always compared with the database's clock, written
 * as {@link #now()}; every value is a bind parameter, the table name is validated. A
 * subclass supplies its time expressions ({@link #now()}, {@link #plusMicros(String)}),
 * which must be constants, and its acquire statement.
 */
public abstract class SqlDialect {

	private final String name;

	private final String table;

	private final String releaseSql;

	private final String keepUntilMinimumHoldSql;

	private final String renewSql;

	private final String renewAsNewHolderSql;

	private final String expiresAtSql;

	private final String deleteExpiredSql;

	private final String cedeSql;

	private final String abandonSql;

	/** The statements of {@link #releaseAll}, by the number of leases they end. */
	private final AtomicReferenceArray<String> releaseAllSql = new AtomicReferenceArray<>(129);

	/**
	 * Creates a dialect for a lock table.
	 * @param name the dialect's name, as given to {@code db-lock.dialect}
	 * @param table the lock table's name
	 */
	protected SqlDialect(String name, String table) {
		this.name = name;
		this.table = SqlIdentifiers.requireTableName(table);
		String heldBy = " WHERE lock_key = ? AND owner = ? AND token = ?";
		this.releaseSql = "DELETE FROM " + table + heldBy;
		this.keepUntilMinimumHoldSql = "UPDATE " + table + " SET expires_at = " + plusMicros("acquired_at") + heldBy
				+ " AND " + plusMicros("acquired_at") + " > " + now();
		this.renewSql = "UPDATE " + table + " SET expires_at = " + plusMicros(now()) + heldBy;
		this.renewAsNewHolderSql = "UPDATE " + table + " SET acquired_at = " + now() + ", expires_at = "
				+ plusMicros(now()) + heldBy;
		this.expiresAtSql = "SELECT expires_at FROM " + table + heldBy;
		this.deleteExpiredSql = deleteExpiredSql(table);
		this.cedeSql = "DELETE FROM " + table + heldBy + " AND wanted_at > " + plusMicros(now());
		this.abandonSql = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ?";
	}

	/**
	 * The dialect's name, also the folder of its migrations under {@code db/db-lock/}.
	 * @return the name
	 */
	public final String name() {
		return this.name;
	}

	/**
	 * The lock table's name.
	 * @return the name
	 */
	public final String table() {
		return this.table;
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
	 * that a statement that waited in the server (for a lock, behind a stalled commit) after
	 * its client gave up writes no lease that ends later than one lease after it was sent.
	 * Here {@link #now()}, which is read once at a statement's start.
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
	protected abstract String plusMicros(String time);

	/**
	 * The statement that deletes at most {@code ?} rows whose lease has ended, checking
	 * expiry again for every row it deletes so that a lease renewed a moment ago stays.
	 * @param table the lock table
	 * @return the SQL, with one {@code ?} for the limit
	 */
	protected abstract String deleteExpiredSql(String table);

	/**
	 * The statement that takes a free or expired key, with the parameters key, owner and
	 * lease in microseconds, and marks a key held by another owner as wanted
	 * ({@code wanted_at}, see {@link #cede}); a take-over clears the mark. Used by
	 * {@link #tryAcquire}, it returns the columns {@code owner}, {@code token} and
	 * {@code expires_at} of the row it wrote or found; a dialect that overrides
	 * {@code tryAcquire} returns the first statement it runs.
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
	 * @return the lease, or empty when another owner holds it
	 */
	public Optional<Lease> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		return jdbc
			.query(acquireSql(),
					(rs, i) -> new Lease(key, rs.getString("owner"), rs.getLong("token"), readInstant(rs, "expires_at")),
					key, owner, micros(lease))
			.stream()
			.filter((row) -> row.owner().equals(owner))
			.findFirst();
	}

	/**
	 * Ends a lease if its owner and token still hold it: deletes its row, or, while the
	 * minimum hold since acquisition has not passed, lets the lease end when it does.
	 * @param jdbc runs the statements
	 * @param lease the lease
	 * @param minimumHold how long after acquisition the lock stays taken; zero for none
	 * @return whether the lease was still held
	 */
	public boolean release(JdbcOperations jdbc, Lease lease, Duration minimumHold) {
		if (!minimumHold.isZero() && jdbc.update(this.keepUntilMinimumHoldSql, micros(minimumHold), lease.key(),
				lease.owner(), lease.token(), micros(minimumHold)) == 1) {
			return true;
		}
		return jdbc.update(this.releaseSql, lease.key(), lease.owner(), lease.token()) == 1;
	}

	/**
	 * Ends leases at once, each if its owner still holds it with its token, in one
	 * statement: a {@code DELETE} of the rows whose key, owner and token are all among the
	 * leases'. As every acquisition has an owner id of its own, a row matches only with its
	 * own key and token.
	 * @param jdbc runs the statement
	 * @param leases the leases, with distinct keys
	 * @return how many rows were deleted
	 */
	public int releaseAll(JdbcOperations jdbc, List<Lease> leases) {
		if (leases.size() == 1) {
			return release(jdbc, leases.get(0), Duration.ZERO) ? 1 : 0;
		}
		return jdbc.update(releaseAllSql(leases.size()), heldByParameters(leases));
	}

	private String releaseAllSql(int count) {
		String sql = (count < this.releaseAllSql.length()) ? this.releaseAllSql.get(count) : null;
		if (sql == null) {
			sql = "DELETE FROM " + this.table + heldByAll(count);
			if (count < this.releaseAllSql.length()) {
				this.releaseAllSql.set(count, sql);
			}
		}
		return sql;
	}

	/**
	 * Extends a lease that its owner and token still hold to {@code lease} from the
	 * database's now.
	 * @param jdbc runs the statements
	 * @param lease the lease
	 * @param duration the new lease from now
	 * @return the new end of the lease, or empty if the row is gone or another owner's
	 */
	public Optional<Instant> renew(JdbcOperations jdbc, Lease lease, Duration duration) {
		return renew(jdbc, lease, duration, false);
	}

	/**
	 * Extends a lease that its owner and token still hold to {@code lease} from the
	 * database's now, and for a {@code newHolder} sets its start ({@code acquired_at}) to
	 * the database's now in the same {@code UPDATE}.
	 * @param jdbc runs the statements
	 * @param lease the lease
	 * @param duration the new lease from now
	 * @param newHolder whether its start is set to now too
	 * @return the new end of the lease, or empty if the row is gone or another owner's
	 */
	public Optional<Instant> renew(JdbcOperations jdbc, Lease lease, Duration duration, boolean newHolder) {
		if (jdbc.update(newHolder ? this.renewAsNewHolderSql : this.renewSql, micros(duration), lease.key(),
				lease.owner(), lease.token()) == 0) {
			return Optional.empty();
		}
		return jdbc.query(this.expiresAtSql, (rs, i) -> readInstant(rs, "expires_at"), lease.key(), lease.owner(),
				lease.token())
			.stream()
			.findFirst();
	}

	/**
	 * Extends leases that their owners and tokens still hold to {@code duration} from the
	 * database's now, in as few statements as the database allows: here an {@code UPDATE}
	 * of the rows whose key, owner and token are all among the leases' (as every
	 * acquisition has an owner id of its own, a row matches only with its own key and
	 * token), then a {@code SELECT} of their new ends.
	 * @param jdbc runs the statements
	 * @param leases the leases, with distinct owners
	 * @param duration the new lease from now
	 * @return for each lease, in order, its new end, or empty if its row is gone or another
	 * owner's
	 */
	public List<Optional<Instant>> renewAll(JdbcOperations jdbc, List<Lease> leases, Duration duration) {
		return renewAll(jdbc, leases, duration, false);
	}

	/**
	 * Extends leases as {@link #renewAll(JdbcOperations, List, Duration)} does, and for
	 * {@code newHolder} sets their start ({@code acquired_at}) to the database's now in the
	 * same {@code UPDATE}.
	 * @param jdbc runs the statements
	 * @param leases the leases, with distinct owners
	 * @param duration the new lease from now
	 * @param newHolder whether their start is set to now too
	 * @return for each lease, in order, its new end, or empty if its row is gone or another
	 * owner's
	 */
	public List<Optional<Instant>> renewAll(JdbcOperations jdbc, List<Lease> leases, Duration duration,
			boolean newHolder) {
		if (leases.size() == 1) {
			return List.of(renew(jdbc, leases.get(0), duration, newHolder));
		}
		Object[] heldBy = heldByParameters(leases);
		Object[] parameters = new Object[heldBy.length + 1];
		parameters[0] = micros(duration);
		System.arraycopy(heldBy, 0, parameters, 1, heldBy.length);
		Map<String, Instant> ends = renewRows(jdbc, renewAllSql(leases.size(), newHolder), parameters, heldBy,
				leases.size());
		List<Optional<Instant>> renewed = new ArrayList<>(leases.size());
		for (Lease lease : leases) {
			renewed.add(Optional.ofNullable(ends.get(lease.owner())));
		}
		return renewed;
	}

	/**
	 * Runs the renewal of {@link #renewAll}: its {@code UPDATE} ({@link #renewAllSql}), then
	 * a {@code SELECT} of the rows' new ends.
	 * @param jdbc runs the statements
	 * @param renewSql the {@code UPDATE}
	 * @param parameters the parameters of {@link #renewAllSql}
	 * @param heldBy the parameters of {@link #heldByAll}
	 * @param count the number of leases
	 * @return the new end of each row renewed, by owner
	 */
	protected Map<String, Instant> renewRows(JdbcOperations jdbc, String renewSql, Object[] parameters,
			Object[] heldBy, int count) {
		Map<String, Instant> ends = new HashMap<>();
		if (jdbc.update(renewSql, parameters) > 0) {
			jdbc.query("SELECT owner, expires_at FROM " + this.table + heldByAll(count), (rs) -> {
				ends.put(rs.getString("owner"), readInstant(rs, "expires_at"));
			}, heldBy);
		}
		return ends;
	}

	/**
	 * The statement of {@link #renewAll} for {@code count} leases: its parameters are the
	 * lease in microseconds, then the keys, owners and tokens as in {@link #heldByAll}.
	 * @param count the number of leases
	 * @param newHolder whether it sets the leases' start to now too
	 * @return the SQL
	 */
	protected String renewAllSql(int count, boolean newHolder) {
		return "UPDATE " + this.table + " SET " + (newHolder ? "acquired_at = " + now() + ", " : "") + "expires_at = "
				+ plusMicros(now()) + heldByAll(count);
	}

	/**
	 * The condition that matches the rows of {@code count} leases: {@code WHERE lock_key IN
	 * (...) AND owner IN (...) AND token IN (...)}, each list with {@code count} parameters.
	 * @param count the number of leases
	 * @return the SQL, starting with a space
	 */
	protected static String heldByAll(int count) {
		String list = String.join(", ", Collections.nCopies(count, "?"));
		return " WHERE lock_key IN (" + list + ") AND owner IN (" + list + ") AND token IN (" + list + ")";
	}

	/**
	 * The parameters of {@link #heldByAll}: the keys, then the owners, then the tokens.
	 * @param leases the leases
	 * @return the parameters
	 */
	protected static Object[] heldByParameters(List<Lease> leases) {
		int count = leases.size();
		Object[] parameters = new Object[count * 3];
		for (int i = 0; i < count; i++) {
			Lease lease = leases.get(i);
			parameters[i] = lease.key();
			parameters[count + i] = lease.owner();
			parameters[2 * count + i] = lease.token();
		}
		return parameters;
	}

	/**
	 * Ends a lease, if its owner and token still hold it, only if another owner's attempt
	 * marked the key as wanted less than {@code wantedWithin} ago.
	 * @param jdbc runs the statement
	 * @param lease the lease
	 * @param wantedWithin how recent the other owner's attempt must be
	 * @return whether the lease was ended
	 */
	public boolean cede(JdbcOperations jdbc, Lease lease, Duration wantedWithin) {
		return jdbc.update(this.cedeSql, lease.key(), lease.owner(), lease.token(), -micros(wantedWithin)) == 1;
	}

	/**
	 * Deletes the row an attempt may have written, if it did: found by the attempt's owner
	 * id, which no other attempt has.
	 * @param jdbc runs the statement
	 * @param key the lock key
	 * @param owner the attempt's owner id
	 * @return whether there was such a row
	 */
	public boolean abandon(JdbcOperations jdbc, String key, String owner) {
		return jdbc.update(this.abandonSql, key, owner) == 1;
	}

	/**
	 * Deletes the rows attempts may have written, in one statement: the rows of the given
	 * keys whose owner is one of the attempts' (an owner id is no other attempt's, so a row
	 * with one of them is that attempt's).
	 * @param jdbc runs the statement
	 * @param keysByOwner each attempt's key, by its owner id
	 * @return how many rows were deleted
	 */
	public int abandonAll(JdbcOperations jdbc, Map<String, String> keysByOwner) {
		return abandonAll(jdbc, table(), keysByOwner);
	}

	/**
	 * Deletes, in one statement, the rows of a table with a {@code lock_key} and an
	 * {@code owner} column whose key and owner are among the given ones.
	 * @param jdbc runs the statement
	 * @param table the table
	 * @param keysByOwner keys by owner id
	 * @return how many rows were deleted
	 */
	static int abandonAll(JdbcOperations jdbc, String table, Map<String, String> keysByOwner) {
		if (keysByOwner.isEmpty()) {
			return 0;
		}
		Set<String> keys = new LinkedHashSet<>(keysByOwner.values());
		List<Object> parameters = new ArrayList<>(keys);
		parameters.addAll(keysByOwner.keySet());
		return jdbc.update("DELETE FROM " + table + " WHERE lock_key IN (" + placeholders(keys.size())
				+ ") AND owner IN (" + placeholders(keysByOwner.size()) + ")", parameters.toArray());
	}

	private static String placeholders(int count) {
		return String.join(", ", Collections.nCopies(count, "?"));
	}

	/**
	 * Deletes rows whose lease has ended.
	 * @param jdbc runs the statement
	 * @param limit the most rows to delete
	 * @return the number deleted
	 */
	public int deleteExpired(JdbcOperations jdbc, int limit) {
		return jdbc.update(this.deleteExpiredSql, limit);
	}

	/**
	 * Reads rows of the lock table in key order.
	 * @param jdbc runs the statement
	 * @param limit the most rows to read
	 * @return the rows
	 */
	public List<LockRow> rows(JdbcOperations jdbc, int limit) {
		return jdbc.query("SELECT lock_key, owner, token, acquired_at, expires_at FROM " + this.table
				+ " ORDER BY lock_key LIMIT ?", (rs, i) -> new LockRow(rs.getString("lock_key"), rs.getString("owner"),
						rs.getLong("token"), readInstant(rs, "acquired_at"), readInstant(rs, "expires_at")), limit);
	}

	/**
	 * The bind parameter of an instant for a time column of this database's lock tables.
	 * @param instant the instant
	 * @return the parameter: here an {@link OffsetDateTime} in UTC
	 */
	protected Object instantParameter(Instant instant) {
		return instant.atOffset(java.time.ZoneOffset.UTC);
	}

	/**
	 * The expression of the database's now plus a bound number of microseconds (negative
	 * for the past), for SQL built outside the dialect.
	 * @return the expression, with one bind parameter
	 */
	final String nowPlusMicros() {
		return plusMicros(now());
	}

	/**
	 * Reads the database's clock, the one every lease is compared with.
	 * @param jdbc the connection's operations
	 * @return the database's now
	 */
	public Instant databaseTime(JdbcOperations jdbc) {
		return Objects.requireNonNull(
				jdbc.queryForObject("SELECT " + now() + " AS database_now", (rs, i) -> readInstant(rs, "database_now")));
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
	 * Makes sure a key has its row in {@link #keyTable()}, on a connection in autocommit that
	 * is not the caller's: its own short transaction, so that no caller's transaction ever
	 * locks a gap where the row would go (the deadlock of {@code FOR UPDATE} on a missing
	 * row). Reads first, so that a row that exists is never written, nor waited for while
	 * another transaction has it locked.
	 * @param jdbc runs the statements, each in autocommit
	 * @param key the key
	 */
	public void ensureKeyRow(JdbcOperations jdbc, String key) {
		if (jdbc.queryForList("SELECT 1 FROM " + keyTable() + " WHERE lock_key = ?", Integer.class, key).isEmpty()) {
			insertKeyRow(jdbc, key);
		}
	}

	/**
	 * The statement that inserts a key's row unless it exists, with the key as its parameter.
	 * @return the SQL
	 */
	protected String insertKeyRowSql() {
		return "INSERT INTO " + keyTable() + " (lock_key) VALUES (?)";
	}

	/**
	 * Runs {@link #insertKeyRowSql()} for {@link #ensureKeyRow}: a duplicate key is a row
	 * that exists.
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
	 * Locks a key's row (which exists) in the transaction of the connection, waiting while
	 * another transaction holds it, at most {@code waitMillis} and never longer (a database
	 * that counts waits in whole seconds waits the whole seconds below it; zero is one look
	 * with {@code SKIP LOCKED}, which raises no error). A lock-wait timeout rolls back only
	 * the statement, never the caller's work before it; a failure after which the database
	 * rolled back the whole transaction is a {@link TransactionRolledBackException}.
	 * @param jdbc runs the statements on the caller's transactional connection
	 * @param key the key
	 * @param waitMillis how long to wait at most; 0 for not at all
	 * @return whether the row is locked, {@code false} if another transaction holds it
	 */
	public boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		String sql = selectKeyRowSql() + ((waitMillis <= 0) ? " FOR UPDATE SKIP LOCKED" : " FOR UPDATE WAIT "
				+ java.math.BigDecimal.valueOf(waitMillis, 3).toPlainString());
		return lockKeyRowWith(jdbc, sql, key);
	}

	/**
	 * Runs a statement of {@link #lockKeyRow}: a lock-wait timeout is a row not locked.
	 * @param jdbc runs it
	 * @param sql the statement, with the key as its parameter
	 * @param key the key
	 * @return whether it returned the row
	 */
	protected final boolean lockKeyRowWith(JdbcOperations jdbc, String sql, String key) {
		try {
			return !jdbc.queryForList(sql, Integer.class, key).isEmpty();
		}
		catch (DataAccessException ex) {
			String rolledBack = rolledBackTransaction(jdbc, ex);
			if (rolledBack != null) {
				throw new TransactionRolledBackException("The database rolled back the whole transaction while it "
						+ "locked '" + key + "': " + rolledBack, ex);
			}
			if (isLockWaitTimeout(ex)) {
				return false;
			}
			throw ex;
		}
	}

	/**
	 * Whether a failure of a statement in the caller's transaction rolled back the whole
	 * transaction, not the statement alone, and why; asked by {@link #lockKeyRowWith}
	 * before a lock-wait timeout is taken for a row not locked. Here never.
	 * @param jdbc the caller's transactional connection, which may be asked about its
	 * settings (a new transaction there is harmless: the old one is gone)
	 * @param failure the failure
	 * @return why the transaction was rolled back, or {@code null} if it was not
	 */
	protected @Nullable String rolledBackTransaction(JdbcOperations jdbc, Throwable failure) {
		return null;
	}

	/**
	 * The query of a key's row for {@link #lockKeyRow}, without its locking clause.
	 * @return the SQL, with the key as its parameter
	 */
	protected final String selectKeyRowSql() {
		return "SELECT 1 FROM " + keyTable() + " WHERE lock_key = ?";
	}

	/**
	 * Whether a failure is a lock-wait timeout, which rolls back the statement alone.
	 * @param failure the failure
	 * @return whether it is one
	 */
	protected boolean isLockWaitTimeout(Throwable failure) {
		return hasErrorCode(failure, 50200);
	}

	/**
	 * The query that draws a fencing token of the transaction or named mode from a
	 * sequence, on the connection that holds the lock: a sequence is not transactional, so a
	 * transaction that rolls back or a holder that dies never gives its token back, and no
	 * second connection is needed. Values increase in the order they are drawn, and a holder
	 * draws while it holds the key: per key, tokens increase with every holder. The lease
	 * tokens' sequence by default.
	 * @return the SQL, or {@code null} where the database has no sequences (MySQL): tokens are
	 * then counted per key with {@link #nextCountedToken}
	 */
	public @Nullable String tokenSequenceSql() {
		return "SELECT NEXT VALUE FOR " + this.table + "_token_seq";
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
	 * has no sequence. Called by the key's holder while it holds the key in that mode, so that
	 * no other caller counts that token meanwhile.
	 * @param jdbc runs the statement, in autocommit
	 * @param key the stored key
	 * @param named the named mode's counter ({@code named_token}), else the transaction mode's
	 * ({@code token})
	 * @return the new token
	 */
	public long nextCountedToken(JdbcOperations jdbc, String key, boolean named) {
		throw new UnsupportedOperationException(this.name + " draws tokens from a sequence");
	}

	/**
	 * What makes this server a node of a multi-primary cluster, if it is one: there, a row
	 * lock or a named lock is local to the node that gave it (the nodes reconcile writes only
	 * at commit), so the transaction and named modes would let callers on different nodes
	 * in at once.
	 * @param jdbc runs statements in autocommit
	 * @return what shows it, or {@code null} if it is not one
	 */
	public @Nullable String multiPrimaryCluster(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * What makes a lock-wait timeout roll back the whole transaction of the caller on this
	 * server, if it does (MySQL and MariaDB with {@code innodb_rollback_on_timeout=ON}): a
	 * transaction-mode wait that runs out then ends the caller's transaction, and the call
	 * fails with a {@link io.github.dblock.DbLockException}, never retried.
	 * @param jdbc runs statements in autocommit
	 * @return what shows it, or {@code null} if a timeout rolls back the statement alone
	 */
	public @Nullable String lockWaitTimeoutRollsBackTransaction(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why this server cannot hold the lock table, if it cannot: it is read-only, as a
	 * replica or a standby is. Locks written on a replica (where a privileged user may still
	 * write) are not the primary's.
	 * @param jdbc runs statements in autocommit
	 * @return the reason, or {@code null} if it can
	 */
	public @Nullable String readOnly(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why this server's reads may miss writes committed on another node of its cluster, if
	 * they may: on a Galera cluster whose sessions do not wait for causality
	 * ({@code wsrep_sync_wait}), or a multi-primary MySQL group replication whose sessions do
	 * not wait for the other members ({@code group_replication_consistency}), a release sent
	 * to one member can miss the row an acquisition wrote through another a moment before.
	 * @param jdbc runs statements in autocommit
	 * @return the reason, or {@code null}
	 */
	public @Nullable String staleClusterReads(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why this server may give a key's fencing tokens out of order, if it may: on MySQL and
	 * MariaDB with {@code innodb_autoinc_lock_mode=2}, where no lock orders an insert's
	 * {@code AUTO_INCREMENT} draw with its index insert.
	 * @param jdbc runs statements in autocommit
	 * @return the warning, or {@code null}
	 */
	public @Nullable String tokenOrderWarning(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * What a failover of this server could lose, if anything is known to: on PostgreSQL,
	 * standbys streaming asynchronously.
	 * @param jdbc runs statements in autocommit
	 * @return the warning, or {@code null}
	 */
	public @Nullable String failoverWarning(JdbcOperations jdbc) {
		return null;
	}

	/**
	 * Why named locks cannot be used on this database or server, if they cannot: none on
	 * H2; on a multi-primary cluster a named lock is local to the node that gave it.
	 * @param jdbc runs statements in autocommit
	 * @return the reason, or {@code null} if they can
	 */
	public @Nullable String namedLocksUnavailable(JdbcOperations jdbc) {
		return "named locks (GET_LOCK, pg_advisory_lock) are not available on " + this.name;
	}

	/**
	 * Takes the server's named lock for a key on the connection (in autocommit), waiting at
	 * most {@code waitMillis} (or the whole seconds below it, where the server counts
	 * seconds).
	 * @param jdbc runs the statements on the connection that will hold the lock
	 * @param key the stored key
	 * @param waitMillis how long to wait at most; 0 for not at all
	 * @return whether it was taken
	 */
	public boolean namedLock(JdbcOperations jdbc, String key, long waitMillis) {
		throw new UnsupportedOperationException(namedLocksUnavailable(jdbc));
	}

	/**
	 * Releases the named lock of a key held by the connection.
	 * @param jdbc runs the statement on the connection that holds the lock
	 * @param key the stored key
	 * @return whether the connection held it
	 */
	public boolean namedUnlock(JdbcOperations jdbc, String key) {
		throw new UnsupportedOperationException(namedLocksUnavailable(jdbc));
	}

	/**
	 * The SHA-256 digest of a text's UTF-8 bytes.
	 * @param text the text
	 * @return the digest
	 */
	protected static byte[] sha256(String text) {
		try {
			return java.security.MessageDigest.getInstance("SHA-256")
				.digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
		}
		catch (java.security.NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform has SHA-256", ex);
		}
	}

	/**
	 * Whether a failure, or one of its causes, is a driver exception with this vendor code.
	 * @param failure the failure
	 * @param errorCode the vendor's error code
	 * @return whether it has it
	 */
	protected static boolean hasErrorCode(Throwable failure, int errorCode) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getErrorCode() == errorCode) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a failure, or one of its causes, is a driver exception with this SQLState.
	 * @param failure the failure
	 * @param sqlState the SQLState
	 * @return whether it has it
	 */
	protected static boolean hasSqlState(Throwable failure, String sqlState) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sqlState.equals(sql.getSQLState())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a failure is the database reporting contention on a lock row (deadlock,
	 * lock-wait timeout, serialization failure, a concurrent insert of the same key): an
	 * attempt that did not acquire, to be tried again, never an error for the user.
	 * @param failure the failure, with the driver's exception in its causes
	 * @return whether it is contention
	 */
	public boolean isContention(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && isContention(sql.getErrorCode(), sql.getSQLState())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a vendor error code or SQLState means contention, as told by
	 * {@link #isContention(Throwable)}.
	 * @param errorCode the vendor's error code
	 * @param sqlState the SQLState, if any
	 * @return whether it is contention
	 */
	protected abstract boolean isContention(int errorCode, @Nullable String sqlState);

	/**
	 * Reads a time column written by this dialect.
	 * @param rs the result set, on a row
	 * @param column the column label
	 * @return the instant
	 * @throws SQLException if the column cannot be read
	 */
	protected Instant readInstant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, OffsetDateTime.class).toInstant();
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

	static long micros(Duration duration) {
		return duration.toNanos() / 1000;
	}

	@Override
	public String toString() {
		return this.name + " dialect on table " + this.table;
	}

}
