package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The lock log in the table {@code <table>_history}, on the lock repository's connections,
 * statement timeout and dialect. Every statement is portable SQL but for the time
 * expressions and parameters, which the dialect gives.
 */
public class JdbcLockHistoryRepository implements LockHistoryRepository {

	private final JdbcLockRepository locks;

	private final SqlDialect dialect;

	private final String insertSql;

	private final String closeSql;

	private final String recoveredSql;

	private final String deleteOldSql;

	/** The tables whose rows are holds, each with its statements. */
	private final List<HoldTable> holdTables;

	/**
	 * Creates the log's repository.
	 * @param locks the lock table's repository, whose connections, timeout and dialect it
	 * uses
	 */
	public JdbcLockHistoryRepository(JdbcLockRepository locks) {
		this.locks = locks;
		this.dialect = locks.dialect();
		String table = this.dialect.table();
		String history = table + "_history";
		this.insertSql = "INSERT INTO " + history
				+ " (lock_key, mode, owner, token, acquired_at, released_at, outcome) VALUES (?, ?, ?, ?, ?, ?, ?)";
		String open = " WHERE lock_key = ? AND owner = ? AND released_at IS NULL";
		this.closeSql = "UPDATE " + history + " SET released_at = ?, outcome = ?" + open;
		this.recoveredSql = "UPDATE " + history + " SET released_at = ?, outcome = 'recovered'" + open;
		// a derived table: MySQL takes no LIMIT in an IN subquery
		this.deleteOldSql = "DELETE FROM " + history + " WHERE id IN (SELECT id FROM (SELECT id FROM " + history
				+ " WHERE acquired_at < ? ORDER BY id LIMIT ?) old_rows)";
		this.holdTables = List.of(new HoldTable(table, "'LEASE'", true, null, history, this.dialect),
				new HoldTable(table + "_rw", "'READ', 'WRITE'", true, table + "_rw_intents", history, this.dialect),
				// a ticket has no start of its own: its holds expire, they are not freed for lasting
				new HoldTable(table + "_fair_queue", "'FAIR'", false, null, history, this.dialect));
	}

	@Override
	public void write(List<Entry> started, List<Entry> ended) {
		this.locks.onOwnConnection((jdbc) -> {
			if (!started.isEmpty()) {
				List<Object[]> rows = new ArrayList<>(started.size());
				for (Entry entry : started) {
					rows.add(new Object[] { entry.key(), entry.mode(), entry.owner(), entry.token(),
							time(entry.acquiredAt()), time(entry.releasedAt()), outcome(entry.outcome()) });
				}
				jdbc.batchUpdate(this.insertSql, rows);
			}
			if (!ended.isEmpty()) {
				List<Object[]> rows = new ArrayList<>(ended.size());
				for (Entry entry : ended) {
					rows.add(new Object[] { time(entry.releasedAt()), outcome(entry.outcome()), entry.key(),
							entry.owner() });
				}
				jdbc.batchUpdate(this.closeSql, rows);
			}
			return Boolean.TRUE;
		});
	}

	@Override
	public int closeExpired(Instant settledBefore, Instant now) {
		return this.locks.onOwnConnection((jdbc) -> {
			int closed = 0;
			for (HoldTable holds : this.holdTables) {
				closed += jdbc.update(holds.expiredSql, time(now));
				closed += jdbc.update(holds.goneSql, time(now), time(settledBefore));
			}
			return closed;
		});
	}

	@Override
	public List<Lease> recover(Duration maxHold, int limit, Instant now) {
		long micros = -(maxHold.toNanos() / 1000);
		List<Lease> freed = new ArrayList<>();
		for (HoldTable holds : this.holdTables) {
			if (holds.oldestSql == null) {
				continue;
			}
			String oldestSql = holds.oldestSql;
			freed.addAll(this.locks.inOwnTransaction((jdbc) -> {
				List<Lease> oldest = jdbc.query(oldestSql, (rs, i) -> new Lease(rs.getString("lock_key"),
						rs.getString("owner"), rs.getLong("token"), Instant.EPOCH), micros, limit);
				if (!oldest.isEmpty()) {
					List<Object[]> closes = new ArrayList<>(oldest.size());
					List<Object[]> frees = new ArrayList<>(oldest.size());
					List<Object[]> intents = new ArrayList<>(oldest.size());
					for (Lease hold : oldest) {
						closes.add(new Object[] { time(now), hold.key(), hold.owner() });
						frees.add(new Object[] { hold.key(), hold.owner(), hold.token() });
						intents.add(new Object[] { hold.key(), hold.owner() });
					}
					jdbc.batchUpdate(this.recoveredSql, closes);
					jdbc.batchUpdate(holds.freeSql, frees);
					if (holds.freeIntentSql != null) {
						// a freed writer's intent would keep readers out until its lease ended
						jdbc.batchUpdate(holds.freeIntentSql, intents);
					}
				}
				return oldest;
			}));
		}
		return freed;
	}

	@Override
	public int deleteOlderThan(Instant before, int limit) {
		return this.locks.onOwnConnection((jdbc) -> jdbc.update(this.deleteOldSql, time(before), limit));
	}

	private @Nullable Object time(@Nullable Instant instant) {
		return (instant != null) ? this.dialect.instantParameter(instant) : null;
	}

	private static @Nullable String outcome(@Nullable Outcome outcome) {
		return (outcome != null) ? outcome.name().toLowerCase(Locale.ROOT) : null;
	}

	/**
	 * A table whose rows are holds of some modes ({@code lock_key}, {@code owner},
	 * {@code expires_at}; and {@code token}, {@code acquired_at} where holds may be freed for
	 * lasting too long), with the statements of the maintenance steps on it.
	 */
	private static final class HoldTable {

		final String expiredSql;

		final String goneSql;

		final @Nullable String oldestSql;

		final String freeSql;

		final @Nullable String freeIntentSql;

		HoldTable(String table, String modes, boolean recoverable, @Nullable String intents, String history,
				SqlDialect dialect) {
			String closeExpired = "UPDATE " + history + " SET released_at = ?, outcome = 'expired' WHERE released_at IS NULL"
					+ " AND mode IN (" + modes + ")";
			String sameHolder = " l WHERE l.lock_key = " + history + ".lock_key AND l.owner = " + history + ".owner";
			this.expiredSql = closeExpired + " AND EXISTS (SELECT 1 FROM " + table + sameHolder + " AND l.expires_at <= "
					+ dialect.now() + ")";
			this.goneSql = closeExpired + " AND acquired_at < ? AND NOT EXISTS (SELECT 1 FROM " + table + sameHolder + ")";
			this.oldestSql = recoverable ? "SELECT lock_key, owner, token FROM " + table + " WHERE acquired_at < "
					+ dialect.nowPlusMicros() + " ORDER BY acquired_at LIMIT ? FOR UPDATE" : null;
			this.freeSql = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ? AND token = ?";
			this.freeIntentSql = (intents != null) ? "DELETE FROM " + intents + " WHERE lock_key = ? AND owner = ?" : null;
		}

	}

}
