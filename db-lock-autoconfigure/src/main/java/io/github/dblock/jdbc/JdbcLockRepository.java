package io.github.dblock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import javax.sql.DataSource;

import io.github.dblock.jdbc.dialect.LeaseStatements;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * {@link LockRepository} over JDBC: the dialect's {@linkplain LeaseStatements lease
 * statements}, each operation on a connection of its own of a {@link LockConnections},
 * outside the caller's transaction, in autocommit and within the statement timeout. A
 * deadlock, lock-wait timeout or duplicate key reported by the database counts as an
 * attempt that did not acquire; a release that lost to contention is tried again until the
 * statement timeout has passed.
 * <p>
 * The read/write modes' storage ({@link #readWriteLocks()}) and the fair mode's
 * ({@link #fairQueue()}) run on the same connections.
 *
 * @since 0.1.0
 */
public class JdbcLockRepository implements LockRepository {

	/** The length of the {@code lock_key} column in every migration. */
	public static final int MAX_KEY_LENGTH = 255;

	/** The statement timeout when none is given. */
	public static final Duration DEFAULT_STATEMENT_TIMEOUT = LockConnections.DEFAULT_STATEMENT_TIMEOUT;

	private static final Log logger = LogFactory.getLog(JdbcLockRepository.class);

	private final LockConnections connections;

	private final SqlDialect dialect;

	private final LeaseStatements sql;

	private final JdbcReadWriteLockRepository readWriteLocks;

	private volatile @Nullable FairLockRepository fairQueue;

	private volatile boolean wakeUps = true;

	/**
	 * Creates a repository with the {@linkplain #DEFAULT_STATEMENT_TIMEOUT default statement
	 * timeout}.
	 * @param dataSource the application's data source
	 * @param dialect the SQL of its database, naming the lock table
	 */
	public JdbcLockRepository(DataSource dataSource, SqlDialect dialect) {
		this(dataSource, dialect, DEFAULT_STATEMENT_TIMEOUT);
	}

	/**
	 * Creates a repository on connections of its own.
	 * @param dataSource the application's data source
	 * @param dialect the SQL of its database, naming the lock table
	 * @param statementTimeout the longest a lock statement may take, from sending it to its
	 * reply; at least one millisecond
	 */
	public JdbcLockRepository(DataSource dataSource, SqlDialect dialect, Duration statementTimeout) {
		this(new LockConnections(dataSource, dialect, statementTimeout));
	}

	/**
	 * Creates a repository on the given connections.
	 * @param connections the owner of the lock connections, with the dialect and the
	 * statement timeout
	 */
	public JdbcLockRepository(LockConnections connections) {
		this.connections = connections;
		this.dialect = connections.dialect();
		this.sql = this.dialect.leases();
		this.readWriteLocks = new JdbcReadWriteLockRepository(connections);
	}

	/**
	 * The dialect in use.
	 * @return the dialect
	 */
	public SqlDialect dialect() {
		return this.dialect;
	}

	/**
	 * The connections this repository runs its statements on.
	 * @return the owner of the lock connections
	 */
	public LockConnections connections() {
		return this.connections;
	}

	@Override
	public Optional<Lease> tryAcquire(String key, String owner, Duration lease) {
		if (StatementDeadline.millisLeft(this.connections.networkTimeoutMillis(), 0) <= 0) {
			// the call's time is up (its earlier statements took it): an attempt not sent
			return Optional.empty();
		}
		try {
			return this.connections.onOwnConnection((jdbc) -> this.dialect.tryAcquire(jdbc, key, owner, lease))
				.map((row) -> new Lease(key, owner, row.token(), row.expiresAt()));
		}
		catch (DataAccessException ex) {
			if (!this.connections.isContention(ex)) {
				throw ex;
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Attempt to acquire '" + key + "' did not acquire: " + ex.getMessage());
			}
			return Optional.empty();
		}
	}

	@Override
	public boolean abandon(String key, String owner) {
		return this.connections.onOwnConnection((jdbc) -> jdbc.update(this.sql.abandonSql(), key, owner) == 1);
	}

	@Override
	public int abandonAll(Map<String, String> keysByOwner) {
		return this.connections.onOwnConnection((jdbc) -> abandonAll(jdbc, this.dialect.table(), keysByOwner));
	}

	/**
	 * Deletes, in one statement, the rows of a table whose key and owner are among the
	 * given ones (an owner id is no other attempt's, so a row with one of them is that
	 * attempt's).
	 */
	static int abandonAll(JdbcOperations jdbc, String table, Map<String, String> keysByOwner) {
		if (keysByOwner.isEmpty()) {
			return 0;
		}
		Set<String> keys = new LinkedHashSet<>(keysByOwner.values());
		List<Object> parameters = new ArrayList<>(keys);
		parameters.addAll(keysByOwner.keySet());
		return jdbc.update(LeaseStatements.abandonAllSql(table, keys.size(), keysByOwner.size()), parameters.toArray());
	}

	@Override
	public boolean release(Lease lease, Duration minimumHold) {
		return this.connections.releasing(() -> this.connections.onOwnConnection((jdbc) -> release(jdbc, lease, minimumHold)));
	}

	/** Deletes the row, or, while the minimum hold has not passed, lets its lease end when it does. */
	private boolean release(JdbcOperations jdbc, Lease lease, Duration minimumHold) {
		long minimum = SqlDialect.micros(minimumHold);
		if (!minimumHold.isZero() && jdbc.update(this.sql.keepUntilMinimumHoldSql(), minimum, lease.key(),
				lease.owner(), lease.token(), minimum) == 1) {
			return true;
		}
		return jdbc.update(this.sql.releaseSql(), lease.key(), lease.owner(), lease.token()) == 1;
	}

	@Override
	public boolean cede(Lease lease, Duration wantedWithin) {
		return this.connections.retryingContention(() -> this.connections.onOwnConnection((jdbc) -> jdbc
			.update(this.sql.cedeSql(), lease.key(), lease.owner(), lease.token(), -SqlDialect.micros(wantedWithin)) == 1));
	}

	/** One {@code DELETE} of the rows whose key, owner and token are all among the leases'. */
	@Override
	public int releaseAll(List<Lease> leases) {
		return this.connections.releasing(() -> this.connections.onOwnConnection((jdbc) -> {
			if (leases.size() == 1) {
				return release(jdbc, leases.get(0), Duration.ZERO) ? 1 : 0;
			}
			return jdbc.update(this.sql.releaseAllSql(leases.size()), heldByParameters(leases));
		}));
	}

	@Override
	public Optional<Instant> renew(Lease lease, Duration duration) {
		return renew(lease, duration, false);
	}

	@Override
	public Optional<Instant> renew(Lease lease, Duration duration, boolean newHolder) {
		return this.connections.retryingContention(
				() -> this.connections.onOwnConnection((jdbc) -> renew(jdbc, lease, duration, newHolder)));
	}

	private Optional<Instant> renew(JdbcOperations jdbc, Lease lease, Duration duration, boolean newHolder) {
		if (jdbc.update(this.sql.renewSql(newHolder), SqlDialect.micros(duration), lease.key(), lease.owner(),
				lease.token()) == 0) {
			return Optional.empty();
		}
		return jdbc
			.query(this.sql.expiresAtSql(), (rs, i) -> this.dialect.readInstant(rs, "expires_at"), lease.key(),
					lease.owner(), lease.token())
			.stream()
			.findFirst();
	}

	@Override
	public List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration) {
		return renewAll(leases, duration, false);
	}

	/**
	 * One {@code UPDATE} of the rows whose key, owner and token are all among the leases',
	 * returning their new ends where the database can, else followed by a {@code SELECT}
	 * of them.
	 */
	@Override
	public List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration, boolean newHolder) {
		// not retried here: the watchdog tries again at its next sweep, and a row another session locked stays locked
		return this.connections.onOwnConnection((jdbc) -> {
			if (leases.size() == 1) {
				return List.of(renew(jdbc, leases.get(0), duration, newHolder));
			}
			Object[] heldBy = heldByParameters(leases);
			Object[] parameters = new Object[heldBy.length + 1];
			parameters[0] = SqlDialect.micros(duration);
			System.arraycopy(heldBy, 0, parameters, 1, heldBy.length);
			Map<String, Instant> ends = new HashMap<>();
			String renewSql = this.sql.renewAllSql(leases.size(), newHolder);
			if (this.dialect.updateReturnsRows()) {
				jdbc.query(renewSql, (rs) -> {
					ends.put(rs.getString("owner"), this.dialect.readInstant(rs, "expires_at"));
				}, parameters);
			}
			else if (jdbc.update(renewSql, parameters) > 0) {
				jdbc.query(this.sql.selectEndsSql(leases.size()), (rs) -> {
					ends.put(rs.getString("owner"), this.dialect.readInstant(rs, "expires_at"));
				}, heldBy);
			}
			List<Optional<Instant>> renewed = new ArrayList<>(leases.size());
			for (Lease lease : leases) {
				renewed.add(Optional.ofNullable(ends.get(lease.owner())));
			}
			return renewed;
		});
	}

	/** The parameters of {@link LeaseStatements#heldByAll}: the keys, then the owners, then the tokens. */
	static Object[] heldByParameters(List<Lease> leases) {
		int count = leases.size();
		Object[] parameters = new Object[count * 3];
		for (int i = 0; i < count; i++) {
			Lease lease = leases.get(i);
			parameters[i] = lease.key();
			parameters[count + i] = lease.owner();
			parameters[2 * count + i] = lease.token();
		}
		return parameters;
	}

	@Override
	public int deleteExpired(int limit) {
		return this.connections.retryingContention(
				() -> this.connections.onOwnConnection((jdbc) -> jdbc.update(this.sql.deleteExpiredSql(), limit)));
	}

	@Override
	public List<LockRow> rows(int limit) {
		return this.connections.onOwnConnection((jdbc) -> jdbc.query(this.sql.rowsSql(), this::lockRow, limit));
	}

	@Override
	public Optional<LockRow> validRow(String key) {
		return this.connections.onOwnConnection(
				(jdbc) -> jdbc.query(this.sql.validRowSql(), this::lockRow, key).stream().findFirst());
	}

	private LockRow lockRow(ResultSet rs, int row) throws SQLException {
		return new LockRow(rs.getString("lock_key"), rs.getString("owner"), rs.getLong("token"),
				this.dialect.readInstant(rs, "acquired_at"), this.dialect.readInstant(rs, "expires_at"));
	}

	/**
	 * Whether {@link #releaseFeed()} gives a feed where the database tells releases
	 * (PostgreSQL); on by default. Read when an engine is built on this repository: set it
	 * before. The auto-configured repository takes {@code db-lock.wake-ups.enabled}; a
	 * repository bean of the application's own sets it itself.
	 * @param wakeUps {@code false} for none: waiters poll alone
	 */
	public void setWakeUps(boolean wakeUps) {
		this.wakeUps = wakeUps;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * On PostgreSQL, unless {@link #setWakeUps turned off}: a feed that listens on a
	 * connection of this repository's data source while lease-mode or fair-mode waiters of
	 * this JVM wait.
	 */
	@Override
	public Optional<ReleaseFeed> releaseFeed() {
		return this.wakeUps ? Optional.ofNullable(this.connections.releaseFeed()) : Optional.empty();
	}

	/** The read/write modes' storage, on this repository's connections. */
	@Override
	public Optional<ReadWriteLockRepository> readWriteLocks() {
		return Optional.of(this.readWriteLocks);
	}

	@Override
	public Instant databaseTime() {
		return this.connections.onOwnConnection((jdbc) -> Objects.requireNonNull(jdbc.queryForObject(
				this.sql.databaseTimeSql(), (rs, i) -> this.dialect.readInstant(rs, "database_now"))));
	}

	/**
	 * A {@link JdbcFairLockRepository} on this repository's connections, created on first
	 * use; empty for a dialect the fair mode has no statements for.
	 */
	@Override
	public Optional<FairLockRepository> fairQueue() {
		FairLockRepository queue = this.fairQueue;
		if (queue == null) {
			synchronized (this) {
				queue = this.fairQueue;
				if (queue == null) {
					try {
						queue = new JdbcFairLockRepository(this.connections);
					}
					catch (IllegalArgumentException ex) {
						return Optional.empty();
					}
					this.fairQueue = queue;
				}
			}
		}
		return Optional.of(queue);
	}

	/**
	 * Reads the number of permits recorded for the key in {@code <table>_semaphore}, and
	 * records {@code permits} if there is none.
	 */
	@Override
	public int recordPermits(String key, int permits) {
		return this.connections.onOwnConnection((jdbc) -> {
			List<Integer> recorded = jdbc.queryForList(this.sql.permitsSql(), Integer.class, key);
			if (!recorded.isEmpty()) {
				return recorded.get(0);
			}
			try {
				jdbc.update(this.sql.recordPermitsSql(), key, permits);
				return permits;
			}
			catch (DuplicateKeyException ex) {
				// another node recorded it at the same moment
				return Objects.requireNonNull(jdbc.queryForObject(this.sql.permitsSql(), Integer.class, key));
			}
		});
	}

	@Override
	public @Nullable String semaphoresUnavailable() {
		return this.connections.onOwnConnection((jdbc) -> {
			try {
				jdbc.queryForList(this.sql.checkSemaphoresSql(), Integer.class);
				return Optional.<String>empty();
			}
			catch (DataAccessException ex) {
				return Optional.of("its table " + this.sql.semaphoresTable() + " cannot be read (" + ex.getMessage()
						+ "); db-lock's migration V9 creates it");
			}
		}).orElse(null);
	}

	@Override
	public int maxKeyLength() {
		return MAX_KEY_LENGTH;
	}

	/**
	 * Whether a statement's wait for a connection is bounded by the statement timeout or
	 * what is left of its call's {@link StatementDeadline}, whichever is less: true for a
	 * {@code HikariDataSource} (Spring Boot's default pool, or db-lock's own); with another
	 * data source the wait is the pool's own and outside a caller's bound.
	 * @return whether the pool wait is bounded
	 */
	public boolean boundsPoolWait() {
		return this.connections.boundsPoolWait();
	}

}
