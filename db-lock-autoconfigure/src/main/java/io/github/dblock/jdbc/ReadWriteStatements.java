package io.github.dblock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * The statements of the read/write modes for one dialect, on the tables
 * {@code <table>_rw} (a row per holder) and {@code <table>_rw_intents} (a writer's intent per
 * key). Time is the dialect's {@link SqlDialect#now()}; every value is a bind parameter.
 * Tokens come from the lease mode's source: {@code AUTO_INCREMENT} on MySQL and MariaDB,
 * {@code <table>_token_seq} elsewhere, and are drawn as in the lease mode, in an order the
 * key's holds follow: on PostgreSQL the reader's and the writer's inserts take the
 * transaction-scoped advisory lock of the key in the holders' table's own class
 * ({@link PostgreSqlDialect#tokenLock(String, String)}) in their {@code WHERE}, before their
 * {@code SELECT} list draws {@code nextval}, and hold it until they commit; on H2 they insert
 * a placeholder token ({@code 0}) and {@link #drawToken} draws the token of the row inserted,
 * in the insert's transaction, so that a row is in the table, locked, before its token is
 * drawn. A reader's row is then checked against writers after that commit, as before.
 */
final class ReadWriteStatements {

	private final SqlDialect dialect;

	private final String holders;

	private final String intents;

	/**
	 * Inserts a reader unless a writer's intent is live: see
	 * {@link #insertReaderParameters(String, String, long)}.
	 */
	final String insertReader;

	/** A holder's token and end, and whether a writer holds or waits: key, key, key, owner. */
	final String checkReader;

	/** Deletes an owner's holder row: key, owner. */
	final String deleteHolder;

	/** Inserts an intent, doing nothing if the key has one: key, owner, lease. */
	final String insertIntent;

	/** Takes an intent that is this owner's or expired: owner, lease, key, owner. */
	final String claimIntent;

	/**
	 * Inserts a writer whose intent is live with at least the margin left, if no holder is
	 * live: see {@link #insertWriterParameters(String, String, long, long)}.
	 */
	final String insertWriter;

	/**
	 * {@link #insertWriter} returning the writer's {@code token} and {@code expires_at}, where
	 * the database can ({@code RETURNING}, H2's {@code FINAL TABLE}); {@code null} on MySQL,
	 * where {@link #selectHolder} reads them after.
	 */
	final @Nullable String insertWriterReturning;

	/** A holder's token and end: key, owner. */
	final String selectHolder;

	/**
	 * On H2, draws the token of a holder's row that its insert wrote with a placeholder, and
	 * returns it: key, owner; {@code null} elsewhere, where the insert draws it.
	 */
	final @Nullable String drawToken;

	/** The dialect if PostgreSQL, whose inserts take the key's advisory lock. */
	private final @Nullable PostgreSqlDialect postgres;

	/**
	 * PostgreSQL: takes the key's advisory lock for the rest of the transaction, before a
	 * writer's insert, so that the insert's snapshot, taken when it starts, holds every
	 * reader's row committed by an insert that drew its token before: the class, the id.
	 */
	final String lockKeySql = "SELECT pg_advisory_xact_lock(?, ?)";

	/**
	 * Deletes a writer's row and its intent in one statement, where the database can (see
	 * {@link #releaseWriterParameters}): a data-modifying {@code WITH} on PostgreSQL, a
	 * multi-table delete on MySQL and MariaDB (which deletes nothing if the writer's row is
	 * gone); {@code null} on H2.
	 */
	final @Nullable String releaseWriter;

	/** Whether {@link #releaseWriter} names the key and owner twice (the {@code WITH} form). */
	private final boolean releaseWriterTwice;

	/** Deletes a holder row that is this owner's with this token: key, owner, token. */
	final String releaseHolder;

	/** Deletes an owner's intent: key, owner. */
	final String deleteIntent;

	/**
	 * Marks a key's live intent, if another owner's, as wanted with the database's now: key,
	 * owner.
	 */
	final String markWanted;

	/**
	 * Ends an owner's intent and leaves its row, with its wanted mark and no owner (an empty
	 * one, which no writer has), for the next writer of the key: key, owner.
	 */
	final String expireIntent;

	/**
	 * Deletes a writer's row if its intent was marked wanted less than a given time ago: key,
	 * owner, the time in microseconds (negative), key, owner, token.
	 */
	final String cedeWriter;

	/** Extends a holder: lease, key, owner, token. */
	final String renewHolder;

	/** Extends an intent: lease, key, owner. */
	final String renewIntent;

	/** Extends {@code count} holders: lease, then keys, owners and tokens. */
	String renewHolders(int count) {
		return "UPDATE " + this.holders + " SET expires_at = " + this.dialect.plusMicros(this.dialect.now())
				+ SqlDialect.heldByAll(count);
	}

	/** The ends of {@code count} holders: keys, owners and tokens. */
	String selectHolders(int count) {
		return "SELECT owner, expires_at FROM " + this.holders + SqlDialect.heldByAll(count);
	}

	/** Extends {@code count} intents: lease, then keys and owners. */
	String renewIntents(int count) {
		String list = String.join(", ", java.util.Collections.nCopies(count, "?"));
		return "UPDATE " + this.intents + " SET expires_at = " + this.dialect.plusMicros(this.dialect.now())
				+ " WHERE lock_key IN (" + list + ") AND owner IN (" + list + ")";
	}

	/** Whether an {@code UPDATE} can return the rows it changed ({@code RETURNING}). */
	boolean updateReturns() {
		// MariaDB's UPDATE has no RETURNING (only INSERT and DELETE)
		return this.dialect.name().equals("postgresql");
	}

	/** Deletes ended holder rows: limit. */
	final String deleteExpiredHolders;

	/** Deletes ended intents: limit. */
	final String deleteExpiredIntents;

	ReadWriteStatements(SqlDialect dialect) {
		this.dialect = dialect;
		String holders = dialect.table() + "_rw";
		String intents = dialect.table() + "_rw_intents";
		this.holders = holders;
		this.intents = intents;
		String now = dialect.now();
		// a new holder's lease counts from when the server received its statement, whatever the statement waited for
		String start = dialect.statementTime();
		boolean mysql = dialect.name().equals("mysql") || dialect.name().equals("mariadb");
		boolean h2 = dialect.name().equals("h2");
		// MySQL and MariaDB draw the token from AUTO_INCREMENT; the others from the lease tokens' sequence
		String tokenColumn = mysql ? "" : ", token";
		String tokenValue = mysql ? "" : h2 ? ", 0" : ", nextval('" + dialect.table() + "_token_seq')";
		this.postgres = (dialect instanceof PostgreSqlDialect postgreSql) ? postgreSql : null;
		// evaluated before the SELECT list, which draws the token
		String drawOrdered = (this.postgres != null) ? "pg_advisory_xact_lock(?, ?) IS NOT NULL AND " : "";
		String noTable = mysql ? " FROM DUAL" : "";
		String keyParameter = h2 ? "CAST(? AS VARCHAR(255))" : "?";
		String ownerParameter = h2 ? "CAST(? AS VARCHAR(128))" : "?";
		String liveIntent = "SELECT 1 FROM " + intents + " i WHERE i.lock_key = ? AND i.expires_at > " + now;
		this.insertReader = "INSERT INTO " + holders + " (lock_key, owner" + tokenColumn
				+ ", kind, acquired_at, expires_at) SELECT " + keyParameter + ", " + ownerParameter + tokenValue
				+ ", 'R', " + start + ", " + dialect.plusMicros(start) + noTable + " WHERE " + drawOrdered + "NOT EXISTS (" + liveIntent + ")";
		this.checkReader = "SELECT r.token, r.expires_at, CASE WHEN EXISTS (" + liveIntent + ") OR EXISTS (SELECT 1 FROM "
				+ holders + " w WHERE w.lock_key = ? AND w.kind = 'W' AND w.expires_at > " + now
				+ ") THEN 1 ELSE 0 END AS blocked FROM " + holders + " r WHERE r.lock_key = ? AND r.owner = ?";
		this.deleteHolder = "DELETE FROM " + holders + " WHERE lock_key = ? AND owner = ?";
		String intentValues = " (lock_key, owner, expires_at) VALUES (?, ?, " + dialect.plusMicros(now) + ")";
		this.insertIntent = mysql ? "INSERT IGNORE INTO " + intents + intentValues
				: h2 ? "INSERT INTO " + intents + intentValues
						: "INSERT INTO " + intents + intentValues + " ON CONFLICT (lock_key) DO NOTHING";
		this.claimIntent = "UPDATE " + intents + " SET owner = ?, expires_at = " + dialect.plusMicros(now)
				+ " WHERE lock_key = ? AND (owner = ? OR expires_at <= " + now + ")";
		// an anti-join, not NOT EXISTS: MySQL refuses a subquery on the table an INSERT writes (error 1093), but
		// takes it in the FROM clause
		this.insertWriter = "INSERT INTO " + holders + " (lock_key, owner" + tokenColumn
				+ ", kind, acquired_at, expires_at) SELECT i.lock_key, i.owner" + tokenValue + ", 'W', " + start + ", "
				+ dialect.plusMicros(start) + " FROM " + intents + " i LEFT JOIN " + holders
				+ " h ON h.lock_key = i.lock_key AND h.expires_at > " + now + " WHERE " + drawOrdered
				+ "i.lock_key = ? AND i.owner = ? AND i.expires_at > " + dialect.plusMicros(now)
				+ " AND h.lock_key IS NULL";
		this.insertWriterReturning = switch (dialect.name()) {
			case "postgresql", "mariadb" -> this.insertWriter + " RETURNING token, expires_at";
			case "h2" -> "SELECT token, expires_at FROM FINAL TABLE (" + this.insertWriter + ")";
			default -> null;
		};
		this.selectHolder = "SELECT token, expires_at FROM " + holders + " WHERE lock_key = ? AND owner = ?";
		this.drawToken = h2 ? "SELECT token FROM FINAL TABLE (UPDATE " + holders + " SET token = NEXT VALUE FOR "
				+ dialect.table() + "_token_seq WHERE lock_key = ? AND owner = ?)" : null;
		this.releaseWriterTwice = !mysql && !h2;
		this.releaseWriter = mysql ? "DELETE h, i FROM " + holders + " h LEFT JOIN " + intents
				+ " i ON i.lock_key = h.lock_key AND i.owner = h.owner WHERE h.lock_key = ? AND h.owner = ? AND h.token = ?"
				: h2 ? null
						: "WITH i AS (DELETE FROM " + intents + " WHERE lock_key = ? AND owner = ?) DELETE FROM " + holders
								+ " WHERE lock_key = ? AND owner = ? AND token = ?";
		this.releaseHolder = "DELETE FROM " + holders + " WHERE lock_key = ? AND owner = ? AND token = ?";
		this.deleteIntent = "DELETE FROM " + intents + " WHERE lock_key = ? AND owner = ?";
		this.markWanted = "UPDATE " + intents + " SET wanted_at = " + now + " WHERE lock_key = ? AND owner <> ? AND expires_at > "
				+ now;
		// the owner is cleared too: a renewal of the writer that was sent before and lands after finds no intent of its
		this.expireIntent = "UPDATE " + intents + " SET owner = '', expires_at = " + now + " WHERE lock_key = ? AND owner = ?";
		this.cedeWriter = "DELETE FROM " + holders + " WHERE EXISTS (SELECT 1 FROM " + intents
				+ " i WHERE i.lock_key = ? AND i.owner = ? AND i.wanted_at > " + dialect.plusMicros(now)
				+ ") AND lock_key = ? AND owner = ? AND token = ?";
		this.renewHolder = "UPDATE " + holders + " SET expires_at = " + dialect.plusMicros(now)
				+ " WHERE lock_key = ? AND owner = ? AND token = ?";
		this.renewIntent = "UPDATE " + intents + " SET expires_at = " + dialect.plusMicros(now)
				+ " WHERE lock_key = ? AND owner = ?";
		this.deleteExpiredHolders = dialect.deleteExpiredSql(holders);
		this.deleteExpiredIntents = dialect.deleteExpiredSql(intents);
	}

	/**
	 * The parameters of {@link #lockKeySql}, or {@code null} where there is none.
	 * @param key the key
	 * @return the advisory lock's class and id on PostgreSQL
	 */
	Object @Nullable [] lockKeyParameters(String key) {
		return (this.postgres != null) ? this.postgres.tokenLock(this.holders, key) : null;
	}

	/**
	 * The parameters of {@link #insertReader}: key, owner, lease, (on PostgreSQL) the key's
	 * advisory lock, key.
	 */
	Object[] insertReaderParameters(String key, String owner, long leaseMicros) {
		if (this.postgres == null) {
			return new Object[] { key, owner, leaseMicros, key };
		}
		Object[] lock = this.postgres.tokenLock(this.holders, key);
		return new Object[] { key, owner, leaseMicros, lock[0], lock[1], key };
	}

	/**
	 * The parameters of {@link #insertWriter}: lease, (on PostgreSQL) the key's advisory lock,
	 * key, owner, margin.
	 */
	Object[] insertWriterParameters(String key, String owner, long leaseMicros, long marginMicros) {
		if (this.postgres == null) {
			return new Object[] { leaseMicros, key, owner, marginMicros };
		}
		Object[] lock = this.postgres.tokenLock(this.holders, key);
		return new Object[] { leaseMicros, lock[0], lock[1], key, owner, marginMicros };
	}

	/** The parameters of {@link #releaseWriter} for a writer's lease. */
	Object[] releaseWriterParameters(Lease lease) {
		return this.releaseWriterTwice
				? new Object[] { lease.key(), lease.owner(), lease.key(), lease.owner(), lease.token() }
				: new Object[] { lease.key(), lease.owner(), lease.token() };
	}

	Instant readInstant(ResultSet rs, String column) throws SQLException {
		return this.dialect.readInstant(rs, column);
	}

}
