package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.dblock.jdbc.dialect.SqlDialect;

/**
 * Checks, on a transaction's own connection just before it commits, that the lease-held
 * locks of its thread are still held: one {@code SELECT} per table that has rows to check
 * (usually one), which takes a shared row lock on each row matched by key, owner and token
 * (the dialect's {@linkplain SqlDialect#sharedRowLock() shared row lock}) and reads whether
 * its lease has ended by the database's clock (plus the dialect's
 * {@linkplain SqlDialect#commitGuardCondition(String) lock for take-overs that do not write
 * the row}). A row that is missing, another owner's or ended is reported. A row found is
 * locked until the transaction ends, so that a take-over by another owner, which writes the
 * row, waits for the commit.
 *
 * @since 0.1.0
 */
public class CommitGuard {

	private final SqlDialect dialect;

	private final int queryTimeoutSeconds;

	/**
	 * Creates a guard.
	 * @param connections the lock connections, for the dialect and the statement timeout
	 * @throws IllegalStateException if the dialect cannot take shared row locks
	 */
	public CommitGuard(LockConnections connections) {
		this.dialect = connections.dialect();
		if (this.dialect.sharedRowLock() == null) {
			throw new IllegalStateException(this.dialect.database() + " cannot take shared row locks, which the commit "
					+ "guard needs: set db-lock.guard-commits=false");
		}
		this.queryTimeoutSeconds = connections.statementTimeoutSeconds();
	}

	/**
	 * Checks rows on a transaction's connection, locking those found for the rest of the
	 * transaction.
	 * @param connection the transaction's connection
	 * @param rows the rows its thread holds
	 * @return the rows that are not held: missing, another owner's, or whose lease has ended
	 * @throws SQLException if a check failed: whether the rows are held is then unknown
	 */
	public List<HeldRow> notHeld(Connection connection, Collection<HeldRow> rows) throws SQLException {
		Map<HeldRow.Table, List<HeldRow>> byTable = new EnumMap<>(HeldRow.Table.class);
		for (HeldRow row : rows) {
			byTable.computeIfAbsent(row.table(), (table) -> new ArrayList<>()).add(row);
		}
		List<HeldRow> notHeld = new ArrayList<>();
		for (Map.Entry<HeldRow.Table, List<HeldRow>> table : byTable.entrySet()) {
			notHeld.addAll(check(connection, table.getKey(), table.getValue()));
		}
		return notHeld;
	}

	private List<HeldRow> check(Connection connection, HeldRow.Table table, List<HeldRow> rows) throws SQLException {
		String name = switch (table) {
			case LEASE -> this.dialect.table();
			case READ_WRITE -> this.dialect.table() + "_rw";
			case FAIR -> this.dialect.table() + "_fair_queue";
		};
		String token = (table == HeldRow.Table.FAIR) ? "ticket" : "token";
		Set<HeldRow> held = new HashSet<>();
		try (PreparedStatement statement = connection
			.prepareStatement(this.dialect.commitGuardSql(name, token, rows.size()))) {
			statement.setQueryTimeout(this.queryTimeoutSeconds);
			int i = 1;
			for (HeldRow row : rows) {
				statement.setString(i++, row.key());
				statement.setString(i++, row.owner());
				statement.setLong(i++, row.token());
				Object[] more = this.dialect.commitGuardParameters(name, row.key());
				if (more != null) {
					for (Object parameter : more) {
						statement.setObject(i++, parameter);
					}
				}
			}
			try (ResultSet rs = statement.executeQuery()) {
				Instant now = Instant.now();
				while (rs.next()) {
					HeldRow found = new HeldRow(table, rs.getString("lock_key"), rs.getString("owner"), rs.getLong(token));
					boolean live = this.dialect.statementNow() != null ? rs.getInt("live") == 1
							: this.dialect.readInstant(rs, "expires_at").isAfter(now);
					if (live) {
						held.add(found);
					}
				}
			}
		}
		List<HeldRow> notHeld = new ArrayList<>();
		for (HeldRow row : rows) {
			if (!held.contains(row)) {
				notHeld.add(row);
			}
		}
		return notHeld;
	}

	@Override
	public String toString() {
		return "CommitGuard[" + this.dialect + "]";
	}

}
