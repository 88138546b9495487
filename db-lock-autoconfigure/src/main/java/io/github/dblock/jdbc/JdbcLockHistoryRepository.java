package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.dblock.jdbc.dialect.LockHistoryStatements;
import io.github.dblock.jdbc.dialect.LockHistoryStatements.HoldTable;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.jspecify.annotations.Nullable;

/**
 * The lock log in the table {@code <table>_history}, the dialect's
 * {@linkplain LockHistoryStatements statements} on a {@link LockConnections}.
 *
 * @since 0.1.0
 */
public class JdbcLockHistoryRepository implements LockHistoryRepository {

	private final LockConnections locks;

	private final SqlDialect dialect;

	private final LockHistoryStatements sql;

	/**
	 * Creates the log's repository.
	 * @param connections the lock connections, with the dialect and the statement timeout
	 */
	public JdbcLockHistoryRepository(LockConnections connections) {
		this.locks = connections;
		this.dialect = connections.dialect();
		this.sql = new LockHistoryStatements(this.dialect);
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
				jdbc.batchUpdate(this.sql.insertSql(), rows);
			}
			if (!ended.isEmpty()) {
				List<Object[]> rows = new ArrayList<>(ended.size());
				for (Entry entry : ended) {
					rows.add(new Object[] { time(entry.releasedAt()), outcome(entry.outcome()), entry.key(),
							entry.owner() });
				}
				jdbc.batchUpdate(this.sql.closeSql(), rows);
			}
			return Boolean.TRUE;
		});
	}

	@Override
	public int closeExpired(Instant settledBefore, Instant now) {
		return this.locks.onOwnConnection((jdbc) -> {
			int closed = 0;
			for (HoldTable holds : this.sql.holdTables()) {
				closed += jdbc.update(holds.expiredSql(), time(now));
				closed += jdbc.update(holds.goneSql(), time(now), time(settledBefore));
			}
			return closed;
		});
	}

	@Override
	public List<Lease> recover(Duration maxHold, int limit, Instant now) {
		long micros = -(maxHold.toNanos() / 1000);
		List<Lease> freed = new ArrayList<>();
		for (HoldTable holds : this.sql.holdTables()) {
			String oldestSql = holds.oldestSql();
			String freeIntentSql = holds.freeIntentSql();
			if (oldestSql == null) {
				continue;
			}
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
					jdbc.batchUpdate(this.sql.recoveredSql(), closes);
					jdbc.batchUpdate(holds.freeSql(), frees);
					if (freeIntentSql != null) {
						// a freed writer's intent would keep readers out until its lease ended
						jdbc.batchUpdate(freeIntentSql, intents);
					}
				}
				return oldest;
			}));
		}
		return freed;
	}

	@Override
	public int deleteOlderThan(Instant before, int limit) {
		return this.locks.onOwnConnection((jdbc) -> jdbc.update(this.sql.deleteOldSql(), time(before), limit));
	}

	@Override
	public List<Entry> latest(int limit) {
		return this.locks.onOwnConnection((jdbc) -> jdbc.query(this.sql.latestSql(), (rs, i) -> {
			long token = rs.getLong("token");
			Long tokenOrNull = rs.wasNull() ? null : token;
			Instant releasedAt = (rs.getObject("released_at") != null) ? this.dialect.readInstant(rs, "released_at")
					: null;
			String outcome = rs.getString("outcome");
			return new Entry(rs.getString("lock_key"), rs.getString("mode"), rs.getString("owner"), tokenOrNull,
					this.dialect.readInstant(rs, "acquired_at"), releasedAt,
					(outcome != null) ? Outcome.valueOf(outcome.toUpperCase(Locale.ROOT)) : null);
		}, limit));
	}

	private @Nullable Object time(@Nullable Instant instant) {
		return (instant != null) ? this.dialect.instantParameter(instant) : null;
	}

	private static @Nullable String outcome(@Nullable Outcome outcome) {
		return (outcome != null) ? outcome.name().toLowerCase(Locale.ROOT) : null;
	}

}
