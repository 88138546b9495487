package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
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

	private final String expiredSql;

	private final String goneSql;

	private final String oldestHoldsSql;

	private final String recoveredSql;

	private final String freeSql;

	private final String deleteOldSql;

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
		String closeExpired = "UPDATE " + history + " SET released_at = ?, outcome = 'expired' WHERE released_at IS NULL";
		this.expiredSql = closeExpired + " AND mode IN (%s) AND EXISTS (SELECT 1 FROM " + table
				+ " l WHERE l.lock_key = " + history + ".lock_key AND l.owner = " + history + ".owner AND l.expires_at <= "
				+ this.dialect.now() + ")";
		this.goneSql = closeExpired + " AND mode IN (%s) AND acquired_at < ? AND NOT EXISTS (SELECT 1 FROM " + table
				+ " l WHERE l.lock_key = " + history + ".lock_key AND l.owner = " + history + ".owner)";
		this.oldestHoldsSql = "SELECT lock_key, owner, token FROM " + table + " WHERE acquired_at < "
				+ this.dialect.nowPlusMicros() + " ORDER BY acquired_at LIMIT ? FOR UPDATE";
		this.recoveredSql = "UPDATE " + history + " SET released_at = ?, outcome = 'recovered'" + open;
		this.freeSql = "DELETE FROM " + table + " WHERE lock_key = ? AND owner = ? AND token = ?";
		// a derived table: MySQL takes no LIMIT in an IN subquery
		this.deleteOldSql = "DELETE FROM " + history + " WHERE id IN (SELECT id FROM (SELECT id FROM " + history
				+ " WHERE acquired_at < ? ORDER BY id LIMIT ?) old_rows)";
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
	public int closeExpired(List<String> modes, Instant settledBefore, Instant now) {
		if (modes.isEmpty()) {
			return 0;
		}
		String in = String.join(", ", Collections.nCopies(modes.size(), "?"));
		return this.locks.onOwnConnection((jdbc) -> {
			List<Object> expired = new ArrayList<>();
			expired.add(time(now));
			expired.addAll(modes);
			int closed = jdbc.update(this.expiredSql.formatted(in), expired.toArray());
			List<Object> gone = new ArrayList<>(expired);
			gone.add(time(settledBefore));
			return closed + jdbc.update(this.goneSql.formatted(in), gone.toArray());
		});
	}

	@Override
	public List<Lease> recover(Duration maxHold, int limit, Instant now) {
		long micros = -(maxHold.toNanos() / 1000);
		return this.locks.inOwnTransaction((jdbc) -> {
			List<Lease> holds = jdbc.query(this.oldestHoldsSql, (rs, i) -> new Lease(rs.getString("lock_key"),
					rs.getString("owner"), rs.getLong("token"), Instant.EPOCH), micros, limit);
			if (!holds.isEmpty()) {
				List<Object[]> closes = new ArrayList<>(holds.size());
				List<Object[]> frees = new ArrayList<>(holds.size());
				for (Lease hold : holds) {
					closes.add(new Object[] { time(now), hold.key(), hold.owner() });
					frees.add(new Object[] { hold.key(), hold.owner(), hold.token() });
				}
				jdbc.batchUpdate(this.recoveredSql, closes);
				jdbc.batchUpdate(this.freeSql, frees);
			}
			return holds;
		});
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

}
