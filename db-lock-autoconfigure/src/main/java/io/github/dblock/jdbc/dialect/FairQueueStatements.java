package io.github.dblock.jdbc.dialect;

import org.jspecify.annotations.Nullable;

/**
 * The fair mode's statements for one dialect, on the tables {@code <table>_fair_queue} and
 * {@code <table>_fair_keys}. A ticket is enqueued by one {@code INSERT ... SELECT} that
 * locks the key's row of the keys table ({@code FOR UPDATE}) before it draws the ticket's
 * number, and keeps it until it commits: a key's tickets commit in the order of their
 * numbers, so no ticket with a lower number appears after a reader saw one. The head is the
 * lowest ticket if its lease has not ended; an ended ticket ahead is deleted, not passed over
 * ({@link #deleteEndedAheadSql()}). Numbers come from the lease tokens' sequence, or from
 * {@code AUTO_INCREMENT} where the dialect says so ({@link #ticketIsGeneratedKey()}).
 *
 * @since 0.1.0
 */
public final class FairQueueStatements {

	private final SqlSyntax dialect;

	private final String queue;

	private final String enqueueSql;

	private final boolean generatedKey;

	private final String insertKeySql;

	private final String headSql;

	private final @Nullable String enqueueAndLookSql;

	private final String deleteEndedAheadSql;

	private final String followingSql;

	private final String renewSql;

	private final String leaveSql;

	private final String abandonSql;

	private final String deleteExpiredSql;

	private final String holdersSql;

	FairQueueStatements(SqlSyntax dialect) {
		this.dialect = dialect;
		String table = dialect.table();
		this.queue = table + "_fair_queue";
		String keys = table + "_fair_keys";
		String lease = dialect.plusMicros(dialect.now());
		this.enqueueSql = dialect.fairEnqueueSql(this.queue, keys, lease);
		this.generatedKey = dialect.ticketIsGeneratedKey();
		this.insertKeySql = dialect.insertUnlessKeyExists(keys, "lock_key", "?");
		this.headSql = ("SELECT ticket, CASE WHEN expires_at > %s THEN 1 ELSE 0 END AS live FROM %s"
				+ " WHERE lock_key = ? AND ticket <= ? ORDER BY ticket LIMIT 1")
			.formatted(dialect.now(), this.queue);
		String look = "SELECT ticket, CASE WHEN expires_at > %s THEN 1 ELSE 0 END AS live FROM %s WHERE lock_key = ? ORDER BY ticket LIMIT 1"
			.formatted(dialect.now(), this.queue);
		this.enqueueAndLookSql = this.generatedKey ? null : inOneRoundTrip(dialect, this.enqueueSql, look);
		// by its primary key: a range on the key's index, or MySQL's choice of the expiry index, would lock more
		this.deleteEndedAheadSql = "DELETE FROM %s WHERE ticket = ? AND lock_key = ? AND expires_at <= %s"
			.formatted(this.queue, dialect.now());
		this.followingSql = ("SELECT ticket, CASE WHEN expires_at > %s THEN 1 ELSE 0 END AS live FROM %s"
				+ " WHERE lock_key = ? AND ticket >= ? ORDER BY ticket LIMIT 2")
			.formatted(dialect.now(), this.queue);
		this.renewSql = "UPDATE %s SET expires_at = %s WHERE ticket = ? AND owner = ? AND expires_at > %s"
			.formatted(this.queue, lease, dialect.now());
		this.leaveSql = "DELETE FROM " + this.queue + " WHERE ticket = ? AND owner = ? AND lock_key = ?";
		this.abandonSql = "DELETE FROM " + this.queue + " WHERE lock_key = ? AND owner = ?";
		this.deleteExpiredSql = dialect.deleteExpiredSql(this.queue);
		this.holdersSql = ("SELECT q.ticket, q.lock_key, q.owner, q.expires_at FROM %1$s q WHERE q.expires_at > %2$s"
				+ " AND NOT EXISTS (SELECT 1 FROM %1$s e WHERE e.lock_key = q.lock_key AND e.ticket < q.ticket)"
				+ " ORDER BY q.lock_key LIMIT ?")
			.formatted(this.queue, dialect.now());
	}

	/**
	 * Reads the head of each key's queue, its lowest ticket if live, which holds the key, in
	 * key order: limit.
	 * @return the SQL
	 */
	public String holdersSql() {
		return this.holdersSql;
	}

	/**
	 * The queue table's name.
	 * @return the name
	 */
	public String queueTable() {
		return this.queue;
	}

	/**
	 * Enqueues a ticket if the key has its row in the keys table: owner, lease in
	 * microseconds, key.
	 * @return the SQL, returning the ticket's number unless {@link #ticketIsGeneratedKey()}
	 */
	public String enqueueSql() {
		return this.enqueueSql;
	}

	/**
	 * The enqueue and a look at the key's lowest ticket in one round trip, where the dialect
	 * sends statements together ({@link SqlSyntax#sentTogether}: one transaction at
	 * {@code READ COMMITTED}) or in sequence ({@link SqlSyntax#sentInSequence}: the enqueue
	 * committed before the look starts); either way the look's snapshot is taken after the
	 * enqueue locked the key's row. Parameters: owner, lease in microseconds, key, key; its
	 * results are the ticket's number (no row if the key has no row in the keys table) and
	 * the lowest ticket with whether it is live ({@code live}, 1 or 0). Run by
	 * {@link OneTransaction#sendTogether}.
	 * @return the SQL, or {@code null}
	 */
	public @Nullable String enqueueAndLookSql() {
		return this.enqueueAndLookSql;
	}

	/**
	 * Whether {@link #enqueueSql()} gives the ticket's number as the generated key.
	 * @return whether it does
	 */
	public boolean ticketIsGeneratedKey() {
		return this.generatedKey;
	}

	/**
	 * Inserts a key's row in the keys table unless it exists (or fails with a duplicate
	 * key, where the database cannot say so): key.
	 * @return the SQL
	 */
	public String insertKeySql() {
		return this.insertKeySql;
	}

	/**
	 * The lowest ticket of a key up to a number, ended or not, with whether its lease is
	 * valid ({@code live}, 1 or 0): key, number.
	 * @return the SQL
	 */
	public String headSql() {
		return this.headSql;
	}

	/**
	 * Deletes a ticket if its lease has ended: number, key. A {@code DELETE}, so that it
	 * waits for a renewal of the ticket that the database is still writing and leaves the
	 * ticket if the renewal committed.
	 * @return the SQL
	 */
	public String deleteEndedAheadSql() {
		return this.deleteEndedAheadSql;
	}

	/**
	 * A key's ticket of a number, if it is still in the queue, and the first ticket after it,
	 * ended or not, each with whether its lease is valid ({@code live}, 1 or 0): key, number.
	 * @return the SQL
	 */
	public String followingSql() {
		return this.followingSql;
	}

	/**
	 * Extends a live ticket: lease, number, owner.
	 * @return the SQL
	 */
	public String renewSql() {
		return this.renewSql;
	}

	/**
	 * Extends {@code count} live tickets: lease, then the numbers, then the owners.
	 * @param count the number of tickets
	 * @return the SQL
	 */
	public String renewAllSql(int count) {
		String list = SqlSyntax.placeholders(count);
		return "UPDATE %s SET expires_at = %s WHERE ticket IN (%s) AND owner IN (%s) AND expires_at > %s"
			.formatted(this.queue, this.dialect.plusMicros(this.dialect.now()), list, list, this.dialect.now());
	}

	/**
	 * Deletes a ticket: number, owner, key.
	 * @return the SQL
	 */
	public String leaveSql() {
		return this.leaveSql;
	}

	/**
	 * Deletes an owner's tickets of a key: key, owner.
	 * @return the SQL
	 */
	public String abandonSql() {
		return this.abandonSql;
	}

	/**
	 * Deletes ended tickets: limit.
	 * @return the SQL
	 */
	public String deleteExpiredSql() {
		return this.deleteExpiredSql;
	}

	/**
	 * Reads nothing, and fails if the queue table is missing.
	 * @return the SQL
	 */
	public String checkTablesSql() {
		return "SELECT ticket FROM " + this.queue + " WHERE 1 = 0";
	}

	/** The statements sent together where the dialect can, else in sequence, else {@code null}. */
	private static @Nullable String inOneRoundTrip(SqlSyntax dialect, String first, String second) {
		String together = dialect.sentTogether(first, second);
		return (together != null) ? together : dialect.sentInSequence(first, second);
	}

}
