package io.github.dblock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jspecify.annotations.Nullable;

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
		if (jdbc.update(this.renewSql, micros(duration), lease.key(), lease.owner(), lease.token()) == 0) {
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
		if (leases.size() == 1) {
			return List.of(renew(jdbc, leases.get(0), duration));
		}
		Object[] heldBy = heldByParameters(leases);
		Object[] parameters = new Object[heldBy.length + 1];
		parameters[0] = micros(duration);
		System.arraycopy(heldBy, 0, parameters, 1, heldBy.length);
		Map<String, Instant> ends = renewRows(jdbc, leases.size(), parameters, heldBy);
		List<Optional<Instant>> renewed = new ArrayList<>(leases.size());
		for (Lease lease : leases) {
			renewed.add(Optional.ofNullable(ends.get(lease.owner())));
		}
		return renewed;
	}

	/**
	 * Runs the renewal of {@link #renewAll}: {@link #renewAllSql}, then a {@code SELECT} of
	 * the rows' new ends.
	 * @param jdbc runs the statements
	 * @param count the number of leases
	 * @param parameters the parameters of {@link #renewAllSql}
	 * @param heldBy the parameters of {@link #heldByAll}
	 * @return the new end of each row renewed, by owner
	 */
	protected Map<String, Instant> renewRows(JdbcOperations jdbc, int count, Object[] parameters, Object[] heldBy) {
		Map<String, Instant> ends = new HashMap<>();
		if (jdbc.update(renewAllSql(count), parameters) > 0) {
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
	 * @return the SQL
	 */
	protected String renewAllSql(int count) {
		return "UPDATE " + this.table + " SET expires_at = " + plusMicros(now()) + heldByAll(count);
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
	 * Deletes rows whose lease has ended.
	 * @param jdbc runs the statement
	 * @param limit the most rows to delete
	 * @return the number deleted
	 */
	public int deleteExpired(JdbcOperations jdbc, int limit) {
		return jdbc.update(this.deleteExpiredSql, limit);
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
