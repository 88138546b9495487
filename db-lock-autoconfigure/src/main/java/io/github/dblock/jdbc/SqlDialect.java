package io.github.dblock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * The SQL of one database. Expiry is always compared with the database's clock, written
 * as {@link #now()}; every value is a bind parameter, the table name is validated.
 */
public abstract class SqlDialect {

	private final String name;

	private final String table;

	private final String releaseSql;

	/**
	 * Creates a dialect for a lock table.
	 * @param name the dialect's name, as given to {@code db-lock.dialect}
	 * @param table the lock table's name
	 */
	protected SqlDialect(String name, String table) {
		this.name = name;
		this.table = SqlIdentifiers.requireTableName(table);
		this.releaseSql = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ? AND token = ?";
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
	 * The statement that takes a free or expired key, with the parameters key, owner and
	 * lease in microseconds. Used by {@link #tryAcquire}, it returns the columns
	 * {@code owner}, {@code token} and {@code expires_at} of the row it wrote or found; a
	 * dialect that overrides {@code tryAcquire} returns the first statement it runs.
	 * @return the SQL
	 */
	protected abstract String acquireSql();

	/**
	 * Takes a free or expired key in as few statements as the database allows.
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
	 * Deletes the row of a lease if its owner and token still hold it.
	 * @param jdbc runs the statement
	 * @param lease the lease
	 * @return whether a row was deleted
	 */
	public boolean release(JdbcOperations jdbc, Lease lease) {
		return jdbc.update(this.releaseSql, lease.key(), lease.owner(), lease.token()) == 1;
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

	static long micros(Duration duration) {
		return duration.toNanos() / 1000;
	}

	@Override
	public String toString() {
		return this.name + " dialect on table " + this.table;
	}

}
