package io.github.dblock.jdbc.dialect;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The lease mode's statements on the lock table of a {@link SqlDialect}, but the one that
 * takes a key ({@link SqlDialect#tryAcquire}). A holder is matched by its key, owner and
 * token ({@code heldBy}: parameters key, owner, token); durations are bind parameters in
 * microseconds.
 *
 * @since 0.1.0
 */
public final class LeaseStatements {

	private static final String HELD_BY = " WHERE lock_key = ? AND owner = ? AND token = ?";

	private final SqlSyntax dialect;

	private final String table;

	private final String releaseSql;

	private final String keepUntilMinimumHoldSql;

	private final String renewSql;

	private final String renewAsNewHolderSql;

	private final String expiresAtSql;

	private final String deleteExpiredSql;

	private final String cedeSql;

	private final String abandonSql;

	private final String rowsSql;

	private final String validRowSql;

	private final String databaseTimeSql;

	private final String permitsSql;

	private final String recordPermitsSql;

	private final String checkSemaphoresSql;

	private final String semaphoresTable;

	/** The statements of {@link #releaseAllSql}, by the number of leases they end. */
	private final AtomicReferenceArray<String> releaseAllSql = new AtomicReferenceArray<>(129);

	LeaseStatements(SqlSyntax dialect) {
		this.dialect = dialect;
		String table = dialect.table();
		this.table = table;
		String now = dialect.now();
		this.releaseSql = "DELETE FROM " + table + HELD_BY;
		this.keepUntilMinimumHoldSql = "UPDATE " + table + " SET expires_at = " + dialect.plusMicros("acquired_at")
				+ HELD_BY + " AND " + dialect.plusMicros("acquired_at") + " > " + now;
		this.renewSql = "UPDATE " + table + " SET expires_at = " + dialect.plusMicros(now) + HELD_BY;
		this.renewAsNewHolderSql = "UPDATE " + table + " SET acquired_at = " + now + ", expires_at = "
				+ dialect.plusMicros(now) + HELD_BY;
		this.expiresAtSql = "SELECT expires_at FROM " + table + HELD_BY;
		this.deleteExpiredSql = dialect.deleteExpiredSql(table);
		this.cedeSql = "DELETE FROM " + table + HELD_BY + " AND wanted_at > " + dialect.plusMicros(now);
		this.abandonSql = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ?";
		this.rowsSql = "SELECT lock_key, owner, token, acquired_at, expires_at FROM " + table
				+ " ORDER BY lock_key LIMIT ?";
		this.validRowSql = "SELECT lock_key, owner, token, acquired_at, expires_at FROM " + table
				+ " WHERE lock_key = ? AND expires_at > " + now;
		this.databaseTimeSql = "SELECT " + now + " AS database_now";
		this.permitsSql = "SELECT permits FROM " + table + "_semaphore WHERE lock_key = ?";
		this.recordPermitsSql = "INSERT INTO " + table + "_semaphore (lock_key, permits) VALUES (?, ?)";
		this.checkSemaphoresSql = "SELECT permits FROM " + table + "_semaphore WHERE 1 = 0";
		this.semaphoresTable = table + "_semaphore";
	}

	/**
	 * Reads no row of the table of the semaphores' numbers of permits: fails if it cannot be
	 * read.
	 * @return the SQL
	 */
	public String checkSemaphoresSql() {
		return this.checkSemaphoresSql;
	}

	/**
	 * The table of the semaphores' numbers of permits, {@code <table>_semaphore}.
	 * @return its name
	 */
	public String semaphoresTable() {
		return this.semaphoresTable;
	}

	/**
	 * The number of permits recorded for a semaphore's key, in the table
	 * {@code <table>_semaphore}: parameter key, column {@code permits}.
	 * @return the SQL
	 */
	public String permitsSql() {
		return this.permitsSql;
	}

	/**
	 * Records the number of permits of a semaphore's key: parameters key, permits; fails
	 * with a duplicate key where one is recorded.
	 * @return the SQL
	 */
	public String recordPermitsSql() {
		return this.recordPermitsSql;
	}

	/**
	 * Deletes a holder's row: key, owner, token.
	 * @return the SQL
	 */
	public String releaseSql() {
		return this.releaseSql;
	}

	/**
	 * Lets a holder's lease end when its minimum hold since acquisition does, if that is
	 * still to come: minimum hold, key, owner, token, minimum hold.
	 * @return the SQL
	 */
	public String keepUntilMinimumHoldSql() {
		return this.keepUntilMinimumHoldSql;
	}

	/**
	 * Extends a holder's lease from the database's now: lease, key, owner, token.
	 * @param newHolder whether it sets the lease's start ({@code acquired_at}) to now too
	 * @return the SQL
	 */
	public String renewSql(boolean newHolder) {
		return newHolder ? this.renewAsNewHolderSql : this.renewSql;
	}

	/**
	 * A holder's end ({@code expires_at}): key, owner, token.
	 * @return the SQL
	 */
	public String expiresAtSql() {
		return this.expiresAtSql;
	}

	/**
	 * Deletes at most {@code ?} rows whose lease has ended: limit.
	 * @return the SQL
	 */
	public String deleteExpiredSql() {
		return this.deleteExpiredSql;
	}

	/**
	 * Deletes a holder's row if another owner marked the key as wanted less than a given
	 * time ago: key, owner, token, the time in microseconds (negative).
	 * @return the SQL
	 */
	public String cedeSql() {
		return this.cedeSql;
	}

	/**
	 * Deletes the row an attempt may have written: key, owner.
	 * @return the SQL
	 */
	public String abandonSql() {
		return this.abandonSql;
	}

	/**
	 * Rows of the lock table in key order, with {@code lock_key}, {@code owner},
	 * {@code token}, {@code acquired_at} and {@code expires_at}: limit.
	 * @return the SQL
	 */
	public String rowsSql() {
		return this.rowsSql;
	}

	/**
	 * The row of one key whose lease has not ended by the database's clock, with the columns
	 * of {@link #rowsSql()}: key.
	 * @return the SQL
	 */
	public String validRowSql() {
		return this.validRowSql;
	}

	/**
	 * The database's now, as the column {@code database_now}.
	 * @return the SQL
	 */
	public String databaseTimeSql() {
		return this.databaseTimeSql;
	}

	/**
	 * Deletes the rows of {@code count} holders, with the parameters of
	 * {@link #heldByAll(int)}.
	 * @param count the number of holders
	 * @return the SQL
	 */
	public String releaseAllSql(int count) {
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
	 * Extends the leases of {@code count} holders from the database's now: the lease, then
	 * the parameters of {@link #heldByAll(int)}; where the database's {@code UPDATE} returns
	 * rows ({@link SqlSyntax#updateReturnsRows()}), returning {@code owner} and
	 * {@code expires_at}.
	 * @param count the number of holders
	 * @param newHolder whether it sets the leases' start to now too
	 * @return the SQL
	 */
	public String renewAllSql(int count, boolean newHolder) {
		String now = this.dialect.now();
		return "UPDATE " + this.table + " SET " + (newHolder ? "acquired_at = " + now + ", " : "") + "expires_at = "
				+ this.dialect.plusMicros(now) + heldByAll(count)
				+ (this.dialect.updateReturnsRows() ? " RETURNING owner, expires_at" : "");
	}

	/**
	 * The {@code owner} and {@code expires_at} of {@code count} holders, with the parameters
	 * of {@link #heldByAll(int)}.
	 * @param count the number of holders
	 * @return the SQL
	 */
	public String selectEndsSql(int count) {
		return "SELECT owner, expires_at FROM " + this.table + heldByAll(count);
	}

	/**
	 * Deletes the rows of a table whose key is among {@code keys} keys and whose owner is
	 * among {@code owners} owners: the keys, then the owners.
	 * @param table a table with a {@code lock_key} and an {@code owner} column
	 * @param keys the number of keys
	 * @param owners the number of owners
	 * @return the SQL
	 */
	public static String abandonAllSql(String table, int keys, int owners) {
		return "DELETE FROM " + table + " WHERE lock_key IN (" + SqlSyntax.placeholders(keys) + ") AND owner IN ("
				+ SqlSyntax.placeholders(owners) + ")";
	}

	/**
	 * The condition that matches the rows of {@code count} holders: {@code WHERE lock_key IN
	 * (...) AND owner IN (...) AND token IN (...)}, each list with {@code count} parameters
	 * (the keys, then the owners, then the tokens). As every acquisition has an owner id of
	 * its own, a row matches only with its own key and token.
	 * @param count the number of holders
	 * @return the SQL, starting with a space
	 */
	public static String heldByAll(int count) {
		String list = SqlSyntax.placeholders(count);
		return " WHERE lock_key IN (" + list + ") AND owner IN (" + list + ") AND token IN (" + list + ")";
	}

}
