package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;

/**
 * {@link FairLockRepository} over JDBC, beside a {@link JdbcLockRepository} whose
 * connections, statement timeout and dialect it shares: every statement runs on a
 * connection of its own in autocommit, outside the caller's transaction, within the
 * statement timeout. A deadlock or lock-wait timeout is tried again (each statement checks
 * what it needs, so running it again is safe), at most three times.
 */
public class JdbcFairLockRepository implements FairLockRepository {

	private static final int ATTEMPTS = 3;

	private final JdbcLockRepository leases;

	private final FairQueueSql sql;

	/**
	 * Creates the repository.
	 * @param leases the lease repository whose connections, statement timeout and dialect
	 * are used
	 * @throws IllegalArgumentException if the fair mode has no statements for its dialect
	 */
	public JdbcFairLockRepository(JdbcLockRepository leases) {
		this.leases = leases;
		this.sql = FairQueueSql.of(leases.dialect());
	}

	@Override
	public Ticket enqueue(String key, String owner, Duration lease) {
		long number = retrying(() -> this.leases.onOwnConnection((jdbc) -> this.sql.enqueue(jdbc, key, owner, lease)));
		return new Ticket(key, owner, number);
	}

	@Override
	public long head(Ticket ticket) {
		return retrying(() -> this.leases.onOwnConnection((jdbc) -> this.sql.head(jdbc, ticket)));
	}

	@Override
	public List<Boolean> renewAll(List<Ticket> tickets, Duration lease) {
		// not retried: the renewal goes on at its next tick
		return this.leases.onOwnConnection((jdbc) -> this.sql.renewAll(jdbc, tickets, lease));
	}

	@Override
	public boolean leave(Ticket ticket) {
		return retrying(() -> this.leases.onOwnConnection((jdbc) -> this.sql.leave(jdbc, ticket)));
	}

	@Override
	public boolean abandon(String key, String owner) {
		return retrying(() -> this.leases.onOwnConnection((jdbc) -> this.sql.abandon(jdbc, key, owner)));
	}

	@Override
	public int abandonAll(Map<String, String> keysByOwner) {
		return retrying(() -> this.leases
			.onOwnConnection((jdbc) -> SqlDialect.abandonAll(jdbc, this.sql.queueTable(), keysByOwner)));
	}

	@Override
	public int deleteExpired(int limit) {
		return retrying(() -> this.leases.onOwnConnection((jdbc) -> this.sql.deleteExpired(jdbc, limit)));
	}

	@Override
	public @Nullable String unavailable() {
		return this.leases.onOwnConnection((jdbc) -> {
			try {
				this.sql.checkTables(jdbc);
			}
			catch (DataAccessException ex) {
				return Optional.of("its queue table " + this.sql.queueTable() + " cannot be read (" + ex.getMessage()
						+ "); db-lock's migration V5 creates it");
			}
			return Optional.ofNullable(this.leases.dialect().multiPrimaryCluster(jdbc))
				.map((cluster) -> cluster + ", whose nodes each number and lock their own inserts until they "
						+ "commit: tickets would not be in arrival order");
		}).orElse(null);
	}

	private <T> T retrying(Supplier<T> statement) {
		for (int attempt = 1;; attempt++) {
			try {
				return statement.get();
			}
			catch (DataAccessException ex) {
				boolean contention = ex instanceof ConcurrencyFailureException
						|| this.leases.dialect().isContention(ex);
				if (!contention || attempt == ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

}
