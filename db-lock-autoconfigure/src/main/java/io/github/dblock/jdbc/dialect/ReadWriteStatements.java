package io.github.dblock.jdbc.dialect;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The statements of the read/write modes for one dialect, on the tables
 * {@code <table>_rw} (a row per holder) and {@code <table>_rw_intents} (a writer's intent per
 * key); every value is a bind parameter. Tokens come from the lease mode's source and are
 * drawn in the order the key's holds follow. Where the dialect has a
 * {@linkplain SqlSyntax#tokenOrderCondition() token-order lock}, the inserts take it before
 * they draw. Elsewhere (H2) the inserts write a placeholder: a writer's token is drawn in its
 * insert's transaction ({@link #drawToken()}), a reader's only after its row has committed, by
 * the statement that checks it against writers ({@link #drawReaderToken()}). A writer's
 * insert, which comes after its intent has committed, thus either sees the reader's row (and
 * waits) or comes before the reader's draw, which then sees the intent, or, once the writer
 * is gone, draws after it. A reader's row is checked against writers after its insert
 * commits, except where the inserts are sent together with the token-order lock
 * ({@link #insertReaderTogether()}): there each insert's snapshot, taken after the lock,
 * holds every row of the key inserted before it, and checks in the insert itself. Where the
 * dialect sends statements {@linkplain SqlSyntax#sentInSequence in sequence} (MariaDB), the
 * reader's insert and check go in one round trip ({@link #insertAndCheckReader()}), and so do
 * the writer's claim and insert ({@link #claimAndInsertWriterTogether()}), each statement
 * committed before the next starts.
 *
 * @since 0.1.0
 */
public final class ReadWriteStatements {

	/** The most ended holder rows one attempt deletes: the next attempt deletes more. */
	private static final int MAX_ENDED = 100;

	private final SqlSyntax dialect;

	private final String holders;

	private final String intents;

	private final String insertReader;

	private final String checkReader;

	private final String deleteHolder;

	private final String endedHolders;

	private final String endedWriters;

	private final String insertIntent;

	private final String claimIntent;

	private final String insertWriter;

	private final @Nullable String insertWriterReturning;

	private final String selectHolder;

	private final @Nullable String drawToken;

	private final @Nullable String drawReaderToken;

	private final @Nullable String insertWriterTogether;

	private final @Nullable String insertReaderTogether;

	private final @Nullable String claimAndInsertWriterTogether;

	private final @Nullable String insertAndCheckReader;

	private final boolean sentTogetherAfterLock;

	private final @Nullable String releaseWriter;

	private final String releaseHolder;

	private final String deleteIntent;

	private final String markWanted;

	private final String expireIntent;

	private final String cedeWriter;

	private final String renewHolder;

	private final String renewIntent;

	ReadWriteStatements(SqlSyntax dialect) {
		this.dialect = dialect;
		String holders = dialect.table() + "_rw";
		String intents = dialect.table() + "_rw_intents";
		this.holders = holders;
		this.intents = intents;
		String now = dialect.now();
		// a new holder's lease counts from when the server received its statement, whatever the statement waited for
		String start = dialect.statementTime();
		// left out where the token is the table's AUTO_INCREMENT
		String tokenValue = dialect.holderTokenValue();
		String tokenColumn = (tokenValue != null) ? ", token" : "";
		String tokenParameter = (tokenValue != null) ? ", " + tokenValue : "";
		// evaluated before the SELECT list, which draws the token
		String drawOrdered = dialect.tokenOrderCondition();
		String liveIntent = "SELECT 1 FROM " + intents + " i WHERE i.lock_key = ? AND i.expires_at > " + now;
		this.insertReader = "INSERT INTO " + holders + " (lock_key, owner" + tokenColumn
				+ ", kind, acquired_at, expires_at) SELECT " + dialect.keyParameter() + ", " + dialect.ownerParameter()
				+ tokenParameter + ", 'R', " + start + ", " + dialect.plusMicros(start) + dialect.fromNoTable() + " WHERE "
				+ drawOrdered + "NOT EXISTS (" + liveIntent + ")";
		// a writer's row that has ended blocks as well until it is deleted: a renewal of it that was checked before
		// it ended may still commit
		String anyWriter = "SELECT 1 FROM " + holders + " w WHERE w.lock_key = ? AND w.kind = 'W'";
		// one pass over the key's writer rows: 1 if one is live, else 2 if one has ended
		String writers = "SELECT MIN(CASE WHEN w.expires_at > " + now + " THEN 1 ELSE 2 END) FROM " + holders
				+ " w WHERE w.lock_key = ? AND w.kind = 'W'";
		String blocked = "CASE WHEN EXISTS (" + liveIntent + ") THEN 1 ELSE COALESCE((" + writers + "), 0) END";
		this.checkReader = "SELECT r.token, r.expires_at, " + blocked + " AS blocked FROM " + holders
				+ " r WHERE r.lock_key = ? AND r.owner = ? AND r.expires_at > " + now;
		this.deleteHolder = "DELETE FROM " + holders + " WHERE lock_key = ? AND owner = ?";
		this.endedHolders = "SELECT owner FROM " + holders + " WHERE lock_key = ? AND expires_at <= " + now
				+ " LIMIT " + MAX_ENDED;
		this.endedWriters = "SELECT owner FROM " + holders + " WHERE lock_key = ? AND expires_at <= " + now
				+ " AND kind = 'W' LIMIT " + MAX_ENDED;
		this.insertIntent = dialect.insertUnlessKeyExists(intents, "lock_key, owner, expires_at",
				"?, ?, " + dialect.plusMicros(now));
		this.claimIntent = "UPDATE " + intents + " SET owner = ?, expires_at = " + dialect.plusMicros(now)
				+ " WHERE lock_key = ? AND (owner = ? OR expires_at <= " + now + ")";
		// an anti-join, not NOT EXISTS: MySQL refuses a subquery on the table an INSERT writes (error 1093), but
		// takes it in the FROM clause
		this.insertWriter = "INSERT INTO " + holders + " (lock_key, owner" + tokenColumn
				+ ", kind, acquired_at, expires_at) SELECT i.lock_key, i.owner" + tokenParameter + ", 'W', " + start + ", "
				+ dialect.plusMicros(start) + " FROM " + intents + " i LEFT JOIN " + holders
				+ " h ON h.lock_key = i.lock_key WHERE " + drawOrdered
				+ "i.lock_key = ? AND i.owner = ? AND i.expires_at > " + dialect.plusMicros(now)
				+ " AND h.lock_key IS NULL";
		this.insertWriterReturning = dialect.insertReturning(this.insertWriter, "token, expires_at");
		this.selectHolder = "SELECT token, expires_at FROM " + holders + " WHERE lock_key = ? AND owner = ?";
		this.drawToken = dialect.drawTokenAfterInsertSql(holders, "");
		this.drawReaderToken = dialect.drawTokenAfterInsertSql(holders,
				" AND expires_at > " + now + " AND NOT EXISTS (" + liveIntent + ") AND NOT EXISTS (" + anyWriter + ")");
		String lockKey = dialect.tokenOrderLockSql();
		this.sentTogetherAfterLock = (lockKey != null);
		this.insertWriterTogether = (lockKey != null && this.insertWriterReturning != null && this.drawToken == null)
				? dialect.sentTogether(lockKey, this.insertWriterReturning) : null;
		// after the lock, the insert's snapshot holds every writer's row whose insert drew before it: no check after
		this.insertReaderTogether = (this.insertWriterTogether != null) ? dialect.sentTogether(lockKey,
				dialect.insertReturning("INSERT INTO " + holders + " (lock_key, owner" + tokenColumn
						+ ", kind, acquired_at, expires_at) SELECT " + dialect.keyParameter() + ", "
						+ dialect.ownerParameter() + tokenParameter + ", 'R', " + start + ", " + dialect.plusMicros(start)
						+ dialect.fromNoTable() + " WHERE NOT EXISTS (" + liveIntent + ") AND NOT EXISTS (" + anyWriter
						+ ")", "token, expires_at"))
				: null;
		String claimInOne = dialect.claimIntentSql(intents, dialect.plusMicros(now));
		if (this.insertWriterTogether != null && claimInOne != null) {
			this.claimAndInsertWriterTogether = dialect.sentTogether(lockKey, claimInOne, this.insertWriterReturning);
		}
		else if (lockKey == null && claimInOne != null && this.insertWriterReturning != null && this.drawToken == null) {
			// the claim commits before the insert starts, as when each is a round trip of its own
			this.claimAndInsertWriterTogether = dialect.sentInSequence(claimInOne, this.insertWriterReturning);
		}
		else {
			this.claimAndInsertWriterTogether = null;
		}
		// the reader's row commits before its check starts, as when each is a round trip of its own
		String changedRows = dialect.changedRows();
		// one row whether or not the reader's row is live, with the number its insert inserted
		String checkAfterInsert = (changedRows != null) ? "SELECT " + changedRows + " AS inserted, r.token, r.expires_at, "
				+ blocked + " AS blocked FROM (SELECT 1 AS one) d LEFT JOIN " + holders
				+ " r ON r.lock_key = ? AND r.owner = ? AND r.expires_at > " + now : null;
		this.insertAndCheckReader = (lockKey == null && this.drawReaderToken == null && checkAfterInsert != null)
				? dialect.sentInSequence(this.insertReader, checkAfterInsert) : null;
		if (lockKey != null && this.insertWriterTogether == null) {
			throw new IllegalArgumentException("The read/write mode's token-order lock needs a writer's insert "
					+ "returning its row, sent together with the lock (SqlSyntax.sentTogether), for " + dialect);
		}
		this.releaseWriter = dialect.releaseWriterSql(holders, intents);
		this.releaseHolder = "DELETE FROM " + holders + " WHERE lock_key = ? AND owner = ? AND token = ?";
		this.deleteIntent = "DELETE FROM " + intents + " WHERE lock_key = ? AND owner = ?";
		this.markWanted = "UPDATE " + intents + " SET wanted_at = " + now + " WHERE lock_key = ? AND owner <> ? AND expires_at > "
				+ now;
		// the owner is cleared too: a renewal of the writer that was sent before and lands after finds no intent of its
		this.expireIntent = "UPDATE " + intents + " SET owner = '', expires_at = " + now + " WHERE lock_key = ? AND owner = ?";
		this.cedeWriter = "DELETE FROM " + holders + " WHERE EXISTS (SELECT 1 FROM " + intents
				+ " i WHERE i.lock_key = ? AND i.owner = ? AND i.wanted_at > " + dialect.plusMicros(now)
				+ ") AND lock_key = ? AND owner = ? AND token = ?";
		// never a row whose lease has ended: another holder may have inserted its own row since
		this.renewHolder = "UPDATE " + holders + " SET expires_at = " + dialect.plusMicros(now)
				+ " WHERE lock_key = ? AND owner = ? AND token = ? AND expires_at > " + now;
		this.renewIntent = "UPDATE " + intents + " SET expires_at = " + dialect.plusMicros(now)
				+ " WHERE lock_key = ? AND owner = ?";
	}

	/**
	 * Reads holder rows, readers' ({@code kind 'R'}) and writers' ({@code 'W'}), in key order: limit.
	 * @return the SQL
	 */
	public String holdersSql() {
		return "SELECT lock_key, owner, token, kind, acquired_at, expires_at FROM " + this.dialect.table()
				+ "_rw ORDER BY lock_key, owner LIMIT ?";
	}

	/**
	 * Inserts a reader unless a writer's intent is live: see {@link #insertReaderParameters(String,
	 * String, long)}.
	 * @return the SQL
	 */
	public String insertReader() {
		return this.insertReader;
	}

	/**
	 * A holder's token and end if its lease has not ended (no row otherwise), and whether a
	 * writer holds or waits ({@code blocked}: 1 if a
	 * writer's intent or row is live, else 2 if a writer's row has ended, else 0):
	 * {@link #checkReaderParameters(String, String)}.
	 * @return the SQL
	 */
	public String checkReader() {
		return this.checkReader;
	}

	/**
	 * Deletes an owner's holder row: key, owner.
	 * @return the SQL
	 */
	public String deleteHolder() {
		return this.deleteHolder;
	}

	/**
	 * The owners of a key's holder rows, readers' and writers', whose leases have ended, by a
	 * plain read, at most 100: key. {@link #insertWriter()} counts every row until
	 * {@link #deleteEndedHolders(int)} deletes it.
	 * @return the SQL
	 */
	public String endedHolders() {
		return this.endedHolders;
	}

	/**
	 * The owners of a key's writer rows whose leases have ended, by a plain read, at most 100:
	 * key.
	 * {@link #checkReader()}, {@link #drawReaderToken()} and {@link #insertReaderTogether()}
	 * count every writer row until
	 * {@link #deleteEndedHolders(int)} deletes it.
	 * @return the SQL
	 */
	public String endedWriters() {
		return this.endedWriters;
	}

	/**
	 * Deletes {@code count} holder rows of a key, by their primary key, if their leases have
	 * ended: key, then the owners. A {@code DELETE}, so that it waits for a renewal of such a
	 * row that the database is still writing and leaves the row if the renewal committed.
	 * @param count the number of owners
	 * @return the SQL
	 */
	public String deleteEndedHolders(int count) {
		return "DELETE FROM " + this.holders + " WHERE lock_key = ? AND owner IN (" + SqlSyntax.placeholders(count)
				+ ") AND expires_at <= " + this.dialect.now();
	}

	/**
	 * Inserts an intent, doing nothing (or failing with a duplicate key, where the database cannot ignore
	 * it) if the key has one: key, owner, lease.
	 * @return the SQL
	 */
	public String insertIntent() {
		return this.insertIntent;
	}

	/**
	 * Takes an intent that is this owner's or expired: owner, lease, key, owner.
	 * @return the SQL
	 */
	public String claimIntent() {
		return this.claimIntent;
	}

	/**
	 * Inserts a writer whose intent is live with at least the margin left, if the key has no
	 * holder row, live or ended (see {@link #deleteEndedHolders(int)}): see
	 * {@link #insertWriterParameters(String, String, long, long)}.
	 * @return the SQL
	 */
	public String insertWriter() {
		return this.insertWriter;
	}

	/**
	 * {@link #insertWriter()} returning the writer's {@code token} and {@code expires_at}, where the
	 * database can; {@code null} where {@link #selectHolder()} reads them after.
	 * @return the SQL
	 */
	public @Nullable String insertWriterReturning() {
		return this.insertWriterReturning;
	}

	/**
	 * A holder's token and end: key, owner.
	 * @return the SQL
	 */
	public String selectHolder() {
		return this.selectHolder;
	}

	/**
	 * Draws the token of a writer's row that its insert wrote with a placeholder, in the insert's
	 * transaction, and returns its {@code token} and {@code expires_at}: key, owner; {@code null} where
	 * the insert draws it.
	 * @return the SQL
	 */
	public @Nullable String drawToken() {
		return this.drawToken;
	}

	/**
	 * Draws the token of a reader's committed row that its insert wrote with a placeholder, if its
	 * lease has not ended, no writer's intent is live and the key has no writer row, live or
	 * ended, and returns its {@code token} and
	 * {@code expires_at} (no row: the reader must withdraw): key, owner, key, key; {@code null} where
	 * the insert draws it and {@link #checkReader()} checks it.
	 * @return the SQL
	 */
	public @Nullable String drawReaderToken() {
		return this.drawReaderToken;
	}

	/**
	 * Where the dialect orders a key's tokens with a lock ({@link SqlSyntax#tokenOrderLockSql()}):
	 * the key's token-order lock, then {@link #insertWriterReturning()}, in one round trip and
	 * one transaction at {@code READ COMMITTED} ({@link SqlSyntax#sentTogether}, run by
	 * {@link OneTransaction#sendTogether}), so that the insert's snapshot, taken when it
	 * starts, after the lock, holds every reader's row committed by an insert that drew its
	 * token before: the parameters of {@link #lockKeyParameters(String)}, then of the insert;
	 * its result sets are the lock's row and the writer's row, if inserted.
	 * @return the SQL, or {@code null} where there is no such lock
	 */
	public @Nullable String insertWriterTogether() {
		return this.insertWriterTogether;
	}

	/**
	 * Where the dialect claims an intent in one statement ({@link SqlSyntax#claimIntentSql}),
	 * the claim and {@link #insertWriterReturning()} in one round trip:
	 * <ul>
	 * <li>where the writer's insert is {@link #insertWriterTogether() sent together} with the
	 * key's token-order lock, the lock, the claim and the insert in one transaction at
	 * {@code READ COMMITTED}: the intent commits with the writer's row, or alone if the
	 * insert finds holders;</li>
	 * <li>where there is no such lock and the dialect sends statements
	 * {@linkplain SqlSyntax#sentInSequence in sequence} (MariaDB), the claim and then the
	 * insert, each committed before the next starts, as in round trips of their own: a
	 * reader's check after its insert sees the intent, or the writer's insert sees the
	 * reader's row.</li>
	 * </ul>
	 * Parameters: {@link #claimAndInsertWriterTogetherParameters(String, String, long, long)};
	 * result sets: the lock's row (where there is a lock), the intent's owner (no row, or
	 * another owner, if the intent is another writer's), the writer's row if inserted.
	 * @return the SQL, or {@code null} where the claim is a round trip of its own
	 */
	public @Nullable String claimAndInsertWriterTogether() {
		return this.claimAndInsertWriterTogether;
	}

	/**
	 * Where the writer's insert is {@link #insertWriterTogether() sent together} with the
	 * key's token-order lock: the lock, then the reader's insert, unless a writer's intent is
	 * live or the key has a writer row, live or ended, returning its {@code token} and
	 * {@code expires_at}, in one round trip and one transaction at {@code READ COMMITTED}.
	 * Every insert of the key's holders takes the lock first and holds it until it commits,
	 * so each one's snapshot holds every row inserted before: the reader needs no check after
	 * its insert. Parameters: {@link #insertReaderTogetherParameters(String, String, long)};
	 * result sets: the lock's row, and the reader's row if inserted.
	 * @return the SQL, or {@code null} where the reader's insert is checked after it commits
	 */
	public @Nullable String insertReaderTogether() {
		return this.insertReaderTogether;
	}

	/**
	 * Where the dialect sends statements {@linkplain SqlSyntax#sentInSequence in sequence}
	 * (MariaDB) and has no token-order lock: {@link #insertReader()}, then
	 * {@link #checkReader()} with the number of rows the insert inserted
	 * ({@link SqlSyntax#changedRows()}), in one round trip, the insert committed before the
	 * check starts, as in round trips of their own. Parameters:
	 * {@link #insertAndCheckReaderParameters(String, String, long)}; result set: one row,
	 * {@code inserted} (0 if a writer's intent is live), then the check's columns
	 * ({@code token} and {@code expires_at} null if the reader's lease has ended).
	 * @return the SQL, or {@code null} where the insert and the check are round trips of
	 * their own, or the reader's insert is {@linkplain #insertReaderTogether() sent together}
	 * with the key's token-order lock
	 */
	public @Nullable String insertAndCheckReader() {
		return this.insertAndCheckReader;
	}

	/**
	 * Deletes a writer's row and its intent in one statement, where the database can (see {@link
	 * #releaseWriterParameters}), deleting nothing if the writer's row is gone; {@code null} elsewhere.
	 * @return the SQL
	 */
	public @Nullable String releaseWriter() {
		return this.releaseWriter;
	}

	/**
	 * Deletes a holder row that is this owner's with this token: key, owner, token.
	 * @return the SQL
	 */
	public String releaseHolder() {
		return this.releaseHolder;
	}

	/**
	 * Deletes an owner's intent: key, owner.
	 * @return the SQL
	 */
	public String deleteIntent() {
		return this.deleteIntent;
	}

	/**
	 * Marks a key's live intent, if another owner's, as wanted with the database's now: key, owner.
	 * @return the SQL
	 */
	public String markWanted() {
		return this.markWanted;
	}

	/**
	 * Ends an owner's intent and leaves its row, with its wanted mark and no owner (an empty one, which no
	 * writer has), for the next writer of the key: key, owner.
	 * @return the SQL
	 */
	public String expireIntent() {
		return this.expireIntent;
	}

	/**
	 * Deletes a writer's row if its intent was marked wanted less than a given time ago: key, owner, the
	 * time in microseconds (negative), key, owner, token.
	 * @return the SQL
	 */
	public String cedeWriter() {
		return this.cedeWriter;
	}

	/**
	 * Extends a holder whose lease has not ended: lease, key, owner, token.
	 * @return the SQL
	 */
	public String renewHolder() {
		return this.renewHolder;
	}

	/**
	 * Extends an intent: lease, key, owner.
	 * @return the SQL
	 */
	public String renewIntent() {
		return this.renewIntent;
	}

	/**
	 * Deletes ended holder rows: limit.
	 * @return the SQL
	 */
	public String deleteExpiredHolders() {
		return this.dialect.deleteExpiredSql(this.dialect.table() + "_rw");
	}

	/**
	 * Deletes ended intents: limit.
	 * @return the SQL
	 */
	public String deleteExpiredIntents() {
		return this.dialect.deleteExpiredSql(this.dialect.table() + "_rw_intents");
	}

	/**
	 * Extends {@code count} holders, those whose lease has not ended: lease, then keys, owners
	 * and tokens.
	 * @param count the number of holders
	 * @return the SQL
	 */
	public String renewHolders(int count) {
		return "UPDATE " + this.holders + " SET expires_at = " + this.dialect.plusMicros(this.dialect.now())
				+ LeaseStatements.heldByAll(count) + " AND expires_at > " + this.dialect.now();
	}

	/**
	 * The ends of {@code count} holders whose lease has not ended: keys, owners and tokens.
	 * @param count the number of holders
	 * @return the SQL
	 */
	public String selectHolders(int count) {
		return "SELECT owner, expires_at FROM " + this.holders + LeaseStatements.heldByAll(count) + " AND expires_at > "
				+ this.dialect.now();
	}

	/**
	 * Extends {@code count} intents: lease, then keys and owners. @param count the number of intents
	 * @return the SQL
	 */
	public String renewIntents(int count) {
		String list = SqlSyntax.placeholders(count);
		return "UPDATE " + this.intents + " SET expires_at = " + this.dialect.plusMicros(this.dialect.now())
				+ " WHERE lock_key IN (" + list + ") AND owner IN (" + list + ")";
	}

	/**
	 * Whether an {@code UPDATE} can return the rows it changed ({@code RETURNING}).
	 * @return whether it can
	 */
	public boolean updateReturns() {
		return this.dialect.updateReturnsRows();
	}

	/**
	 * Whether the statements sent together ({@link #insertReaderTogether()},
	 * {@link #insertWriterTogether()}, {@link #claimAndInsertWriterTogether()}) start with the
	 * key's token-order lock, whose result set then comes first.
	 * @return whether they do
	 */
	public boolean sentTogetherAfterLock() {
		return this.sentTogetherAfterLock;
	}

	/**
	 * The parameters of the token-order lock of {@link #insertWriterTogether()}.
	 * @param key the key
	 * @return the lock's parameters, or {@code null} where there is no such lock
	 */
	public Object @Nullable [] lockKeyParameters(String key) {
		return this.dialect.tokenOrderLock(this.holders, key);
	}

	/**
	 * The parameters of {@link #insertReader()}: key, owner, lease, the key's token-order
	 * lock (where there is one), key.
	 * @param key the key
	 * @param owner the reader
	 * @param leaseMicros the lease in microseconds
	 * @return the parameters
	 */
	public Object[] insertReaderParameters(String key, String owner, long leaseMicros) {
		Object[] lock = this.dialect.tokenOrderLock(this.holders, key);
		if (lock == null) {
			return new Object[] { key, owner, leaseMicros, key };
		}
		return new Object[] { key, owner, leaseMicros, lock[0], lock[1], key };
	}

	/**
	 * The parameters of {@link #insertReaderTogether()}: the key's token-order lock, key,
	 * owner, lease, key, key.
	 * @param key the key
	 * @param owner the reader
	 * @param leaseMicros the lease in microseconds
	 * @return the parameters
	 */
	public Object[] insertReaderTogetherParameters(String key, String owner, long leaseMicros) {
		Object[] lock = Objects.requireNonNull(this.dialect.tokenOrderLock(this.holders, key));
		return new Object[] { lock[0], lock[1], key, owner, leaseMicros, key, key };
	}

	/**
	 * The parameters of {@link #checkReader()}.
	 * @param key the key
	 * @param owner the reader
	 * @return the parameters
	 */
	public Object[] checkReaderParameters(String key, String owner) {
		return new Object[] { key, key, key, owner };
	}

	/**
	 * The parameters of {@link #insertAndCheckReader()}: those of {@link #insertReader()},
	 * then those of {@link #checkReader()}.
	 * @param key the key
	 * @param owner the reader
	 * @param leaseMicros the lease in microseconds
	 * @return the parameters
	 */
	public Object[] insertAndCheckReaderParameters(String key, String owner, long leaseMicros) {
		Object[] insert = insertReaderParameters(key, owner, leaseMicros);
		Object[] check = checkReaderParameters(key, owner);
		Object[] all = new Object[insert.length + check.length];
		System.arraycopy(insert, 0, all, 0, insert.length);
		System.arraycopy(check, 0, all, insert.length, check.length);
		return all;
	}

	/**
	 * The parameters of {@link #claimAndInsertWriterTogether()}: the key's token-order lock
	 * (where there is one), key, owner, lease, then those of {@link #insertWriter()}.
	 * @param key the key
	 * @param owner the writer
	 * @param leaseMicros the lease in microseconds
	 * @param marginMicros the least the intent must have left, in microseconds
	 * @return the parameters
	 */
	public Object[] claimAndInsertWriterTogetherParameters(String key, String owner, long leaseMicros,
			long marginMicros) {
		Object[] lock = this.dialect.tokenOrderLock(this.holders, key);
		Object[] claim = (lock != null) ? new Object[] { lock[0], lock[1], key, owner, leaseMicros }
				: new Object[] { key, owner, leaseMicros };
		Object[] insert = insertWriterParameters(key, owner, leaseMicros, marginMicros);
		Object[] all = new Object[claim.length + insert.length];
		System.arraycopy(claim, 0, all, 0, claim.length);
		System.arraycopy(insert, 0, all, claim.length, insert.length);
		return all;
	}

	/**
	 * The parameters of {@link #insertWriter()}: lease, the key's token-order lock (where
	 * there is one), key, owner, margin.
	 * @param key the key
	 * @param owner the writer
	 * @param leaseMicros the lease in microseconds
	 * @param marginMicros the least the intent must have left, in microseconds
	 * @return the parameters
	 */
	public Object[] insertWriterParameters(String key, String owner, long leaseMicros, long marginMicros) {
		Object[] lock = this.dialect.tokenOrderLock(this.holders, key);
		if (lock == null) {
			return new Object[] { leaseMicros, key, owner, marginMicros };
		}
		return new Object[] { leaseMicros, lock[0], lock[1], key, owner, marginMicros };
	}

	/**
	 * The parameters of {@link #releaseWriter()} for a writer's lease.
	 * @param key the key
	 * @param owner the writer
	 * @param token the writer's token
	 * @return the parameters
	 */
	public Object[] releaseWriterParameters(String key, String owner, long token) {
		return this.dialect.releaseWriterParameters(key, owner, token);
	}

	/**
	 * Reads a time column, as {@link SqlSyntax#readInstant(ResultSet, String)}.
	 * @param rs the result set, on a row
	 * @param column the column label
	 * @return the instant
	 * @throws SQLException if the column cannot be read
	 */
	public Instant readInstant(ResultSet rs, String column) throws SQLException {
		return this.dialect.readInstant(rs, column);
	}

}
