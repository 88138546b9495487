package io.github.dblock.jdbc.dialect;

/**
 * The statements of the scheduled jobs' slots ({@code @OncePerSlot}) on the table
 * {@code <table>_slot} of a {@link SqlSyntax}: one row per slot of a task, keyed by the
 * task and the slot's nominal fire time ({@code slot_at}), written by the node that claims
 * it. Times are the database's; every value is a bind parameter.
 *
 * @since 0.1.0
 */
public final class SlotStatements {

	private final String table;

	private final String databaseTimeSql;

	private final String claimSql;

	private final String deleteBeforeSql;

	private final String checkSql;

	private final String claimsSql;

	/**
	 * Creates the statements on a dialect's slot table.
	 * @param dialect the dialect, naming the lock table whose name the slot table's starts
	 * with
	 */
	public SlotStatements(SqlSyntax dialect) {
		this.table = dialect.table() + "_slot";
		String now = dialect.now();
		this.databaseTimeSql = "SELECT " + now + " AS database_now" + dialect.fromNoTable();
		this.claimSql = dialect.insertUnlessPrimaryKeyExists(this.table, "task, slot_at, owner, claimed_at",
				"?, ?, ?, " + now);
		this.deleteBeforeSql = "DELETE FROM " + this.table + " WHERE task = ? AND slot_at < ?";
		this.checkSql = "SELECT slot_at FROM " + this.table + " WHERE 1 = 0";
		this.claimsSql = "SELECT slot_at, owner, claimed_at FROM " + this.table
				+ " WHERE task = ? ORDER BY slot_at DESC LIMIT ?";
	}

	/**
	 * The slot table's name, {@code <table>_slot}.
	 * @return the name
	 */
	public String table() {
		return this.table;
	}

	/**
	 * The database's now, as the column {@code database_now}.
	 * @return the SQL
	 */
	public String databaseTimeSql() {
		return this.databaseTimeSql;
	}

	/**
	 * Claims a slot, with the database's now as its {@code claimed_at}: parameters task,
	 * slot, owner; where the slot is claimed, inserts nothing or fails with a duplicate key,
	 * as the database can ({@link SqlSyntax#insertUnlessPrimaryKeyExists}).
	 * @return the SQL
	 */
	public String claimSql() {
		return this.claimSql;
	}

	/**
	 * Deletes a task's slots before a time: parameters task, time.
	 * @return the SQL
	 */
	public String deleteBeforeSql() {
		return this.deleteBeforeSql;
	}

	/**
	 * Reads no row of the slot table: fails if it cannot be read.
	 * @return the SQL
	 */
	public String checkSql() {
		return this.checkSql;
	}

	/**
	 * A task's claimed slots, the latest first, with {@code slot_at}, {@code owner} and
	 * {@code claimed_at}: parameters task, limit.
	 * @return the SQL
	 */
	public String claimsSql() {
		return this.claimsSql;
	}

}
