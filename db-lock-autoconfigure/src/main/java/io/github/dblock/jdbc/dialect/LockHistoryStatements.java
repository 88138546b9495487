package io.github.dblock.jdbc.dialect;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The lock log's statements, on the table {@code <table>_history}, and the statements of
 * its maintenance on the tables whose rows are holds. Every statement is portable SQL but
 * for the time expressions, which the dialect gives.
 *
 * @since 0.1.0
 */
public final class LockHistoryStatements {

	private final String insertSql;

	private final String closeSql;

	private final String recoveredSql;

	private final String deleteOldSql;

	private final String latestSql;

	private final List<HoldTable> holdTables;

	/**
	 * Creates the statements of a dialect's lock log.
	 * @param dialect the dialect, naming the lock table
	 */
	public LockHistoryStatements(SqlSyntax dialect) {
		String table = dialect.table();
		String history = table + "_history";
		this.insertSql = "INSERT INTO " + history
				+ " (lock_key, mode, owner, token, acquired_at, released_at, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)";
		String open = " WHERE lock_key = ? AND owner = ? AND released_at IS NULL";
		this.closeSql = "UPDATE " + history + " SET released_at = ?, outcome = ?" + open;
		this.recoveredSql = "UPDATE " + history + " SET released_at = ?, outcome = 'recovered'" + open;
		// a derived table: MySQL takes no LIMIT in an IN subquery
		this.deleteOldSql = "DELETE FROM " + history + " WHERE id IN (SELECT id FROM (SELECT id FROM " + history
				+ " WHERE acquired_at < ? ORDER BY id LIMIT ?) old_rows)";
		this.latestSql = "SELECT lock_key, mode, owner, token, acquired_at, released_at, outcome FROM " + history
				+ " ORDER BY acquired_at DESC, id DESC LIMIT ?";
		this.holdTables = List.of(new HoldTable(table, "'LEASE', 'SEMAPHORE'", true, null, history, dialect),
				new HoldTable(table + "_rw", "'READ', 'WRITE'", true, table + "_rw_intents", history, dialect),
				// a ticket has no start of its own: its holds expire, they are not freed for lasting
				new HoldTable(table + "_fair_queue", "'FAIR'", false, null, history, dialect));
	}

	/**
	 * Inserts an entry: key, mode, owner, token, acquired at, released at, outcome.
	 * @return the SQL
	 */
	public String insertSql() {
		return this.insertSql;
	}

	/**
	 * Closes a holder's open entry: released at, outcome, key, owner.
	 * @return the SQL
	 */
	public String closeSql() {
		return this.closeSql;
	}

	/**
	 * Closes a holder's open entry as recovered: released at, key, owner.
	 * @return the SQL
	 */
	public String recoveredSql() {
		return this.recoveredSql;
	}

	/**
	 * Deletes at most a number of the oldest entries acquired before a time: time, limit.
	 * @return the SQL
	 */
	public String deleteOldSql() {
		return this.deleteOldSql;
	}

	/**
	 * Reads the entries that began last, the latest first: limit.
	 * @return the SQL
	 */
	public String latestSql() {
		return this.latestSql;
	}

	/**
	 * The tables whose rows are holds, each with its statements.
	 * @return the lease, read/write and fair tables
	 */
	public List<HoldTable> holdTables() {
		return this.holdTables;
	}

	/**
	 * A table whose rows are holds of some modes ({@code lock_key}, {@code owner},
	 * {@code expires_at}; and {@code token}, {@code acquired_at} where holds may be freed for
	 * lasting too long), with the statements of the lock log's maintenance on it.
	 */
	public static final class HoldTable {

		private final String expiredSql;

		private final String goneSql;

		private final @Nullable String oldestSql;

		private final String freeSql;

		private final @Nullable String freeIntentSql;

		HoldTable(String table, String modes, boolean recoverable, @Nullable String intents, String history,
				SqlSyntax dialect) {
			String closeExpired = "UPDATE " + history + " SET released_at = ?, outcome = 'expired' WHERE released_at IS NULL"
					+ " AND mode IN (" + modes + ")";
			String sameHolder = " l WHERE l.lock_key = " + history + ".lock_key AND l.owner = " + history + ".owner";
			this.expiredSql = closeExpired + " AND EXISTS (SELECT 1 FROM " + table + sameHolder + " AND l.expires_at <= "
					+ dialect.now() + ")";
			this.goneSql = closeExpired + " AND acquired_at < ? AND NOT EXISTS (SELECT 1 FROM " + table + sameHolder + ")";
			this.oldestSql = recoverable ? "SELECT lock_key, owner, token FROM " + table + " WHERE acquired_at < "
					+ dialect.plusMicros(dialect.now()) + " ORDER BY acquired_at LIMIT ? FOR UPDATE" : null;
			this.freeSql = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ? AND token = ?";
			this.freeIntentSql = (intents != null) ? "DELETE FROM " + intents + " WHERE lock_key = ? AND owner = ?" : null;
		}

		/**
		 * Closes the open entries of the table's modes whose hold has expired: now.
		 * @return the SQL
		 */
		public String expiredSql() {
			return this.expiredSql;
		}

		/**
		 * Closes as expired the open entries of the table's modes acquired before a time whose
		 * hold is gone: now, the time.
		 * @return the SQL
		 */
		public String goneSql() {
			return this.goneSql;
		}

		/**
		 * Locks the oldest holds acquired more than a time ago, returning {@code lock_key},
		 * {@code owner} and {@code token}: the time in microseconds (negative), limit.
		 * @return the SQL, or {@code null} where holds are not freed for lasting
		 */
		public @Nullable String oldestSql() {
			return this.oldestSql;
		}

		/**
		 * Deletes a hold: key, owner, token.
		 * @return the SQL
		 */
		public String freeSql() {
			return this.freeSql;
		}

		/**
		 * Deletes a freed writer's intent: key, owner.
		 * @return the SQL, or {@code null} where holds have no intents
		 */
		public @Nullable String freeIntentSql() {
			return this.freeIntentSql;
		}

	}

}
