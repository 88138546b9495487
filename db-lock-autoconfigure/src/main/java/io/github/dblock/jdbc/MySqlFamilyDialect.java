package io.github.dblock.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;

/**
 * What MySQL and MariaDB share. An {@code INSERT IGNORE} takes a free key: the cheapest
 * statement InnoDB has, and its {@code AUTO_INCREMENT} column gives the fencing token in
 * the reply, persisted across restarts (MySQL 8.0, MariaDB 10.2.4 and later). On a
 * duplicate key, an {@code UPDATE} marks a lease that has not expired as wanted (by
 * {@code UTC_TIMESTAMP(6)}), and if there was none, a {@code DELETE} that checks expiry
 * removes an expired lease and the insert is tried once more. Times are {@code DATETIME(6)} in UTC,
 * independent of the session time zone. Neither database returns values from an
 * {@code INSERT} in its reply, so the lease end reported to the caller is the database's
 * time estimated from an offset measured every minute, never later than the database's;
 * the database alone decides expiry.
 * <p>
 * The insert is an {@code INSERT ... SELECT ... FROM DUAL}, not an {@code INSERT ... VALUES}:
 * InnoDB allocates the {@code AUTO_INCREMENT} token before the row's index insert, and for a
 * simple insert with {@code innodb_autoinc_lock_mode} 1 (MariaDB's default) it holds only a
 * mutex for the allocation, so an insert descheduled between the two could hold the key
 * after a later insert that drew a larger token. For an {@code INSERT ... SELECT} with
 * {@code innodb_autoinc_lock_mode} 0 or 1, InnoDB holds the table's {@code AUTO-INC} lock
 * from the allocation to the end of the statement, after the index insert, and every other
 * insert into the table waits for it: tokens are drawn in the order rows are inserted, so a
 * later holder of a key drew later. With {@code innodb_autoinc_lock_mode} 2 (MySQL 8's
 * default, required by Galera) InnoDB takes no such lock, and an insert descheduled between
 * its draw and its index insert can still put a key's tokens out of order.
 */
abstract class MySqlFamilyDialect extends SqlDialect {

	/** ER_DUP_ENTRY. */
	private static final int DUPLICATE_KEY = 1062;

	private final String insertSql;

	private final String deleteExpiredKeySql;

	private final String markWantedSql;

	/** How long a measured clock offset is used before it is measured again. */
	private static final long CLOCK_OFFSET_AGE_NANOS = Duration.ofMinutes(1).toNanos();

	private volatile @Nullable ClockOffset clockOffset;

	MySqlFamilyDialect(String name, String table) {
		super(name, table);
		// IGNORE: a held key is a warning, not an error that the driver logs at WARN on every refused attempt;
		// nothing else can be ignored here, as every value is checked before (key length) or generated;
		// SELECT, not VALUES: InnoDB holds the AUTO-INC lock until the row is inserted (see the class)
		this.insertSql = "INSERT IGNORE INTO %s (lock_key, owner, acquired_at, expires_at) SELECT ?, ?, %s, %s FROM DUAL"
			.formatted(table(), now(), plusMicros(now()));
		this.deleteExpiredKeySql = "DELETE FROM %s WHERE lock_key = ? AND expires_at <= %s".formatted(table(), now());
		this.markWantedSql = "UPDATE %1$s SET wanted_at = %2$s WHERE lock_key = ? AND expires_at > %2$s"
			.formatted(table(), now());
	}

	@Override
	public String now() {
		return "UTC_TIMESTAMP(6)";
	}

	@Override
	protected String plusMicros(String time) {
		return time + " + INTERVAL ? MICROSECOND";
	}

	@Override
	protected String deleteExpiredSql(String table) {
		return "DELETE FROM " + table + " WHERE expires_at <= " + now() + " LIMIT ?";
	}

	@Override
	protected String acquireSql() {
		return this.insertSql;
	}

	@Override
	public Optional<Lease> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		Duration offset = clockOffset(jdbc);
		Lease inserted = insert(jdbc, key, owner, lease, offset);
		if (inserted == null && jdbc.update(this.markWantedSql, key) == 0 && jdbc.update(this.deleteExpiredKeySql, key) == 1) {
			inserted = insert(jdbc, key, owner, lease, offset);
		}
		return Optional.ofNullable(inserted);
	}

	/** The new lease, or {@code null} if the key has a row. */
	private @Nullable Lease insert(JdbcOperations jdbc, String key, String owner, Duration lease, Duration offset) {
		Instant sentAt = Instant.now();
		KeyHolder keys = new GeneratedKeyHolder();
		int inserted;
		try {
			inserted = jdbc.update((con) -> {
				PreparedStatement ps = con.prepareStatement(this.insertSql, Statement.RETURN_GENERATED_KEYS);
				ps.setString(1, key);
				ps.setString(2, owner);
				ps.setLong(3, micros(lease));
				return ps;
			}, keys);
		}
		catch (DataIntegrityViolationException ex) {
			if (hasErrorCode(ex, DUPLICATE_KEY)) {
				return null;
			}
			throw ex;
		}
		if (inserted == 0) {
			// ignored: the key has a row
			return null;
		}
		long token = Objects.requireNonNull(keys.getKey(), "no generated token").longValue();
		return new Lease(key, owner, token, sentAt.plus(offset).plus(lease));
	}

	/**
	 * The database clock's offset from this JVM's, measured again every minute so that
	 * clocks that drift apart are followed. It is a lower bound: the database read its clock
	 * before the reply came back, so a lease end estimated with it is never later than the
	 * database's.
	 */
	private Duration clockOffset(JdbcOperations jdbc) {
		ClockOffset offset = this.clockOffset;
		long now = System.nanoTime();
		if (offset == null || now - offset.measuredAt() > CLOCK_OFFSET_AGE_NANOS) {
			LocalDateTime databaseNow = Objects.requireNonNull(jdbc.queryForObject("SELECT " + now(), LocalDateTime.class));
			offset = new ClockOffset(Duration.between(Instant.now(), databaseNow.toInstant(ZoneOffset.UTC)), now);
			this.clockOffset = offset;
		}
		return offset.offset();
	}

	@Override
	protected String insertKeyRowSql() {
		return "INSERT IGNORE INTO " + keyTable() + " (lock_key) VALUES (?)";
	}

	/**
	 * {@code FOR UPDATE WAIT n} counts whole seconds (a fraction is cut to 0): the whole
	 * seconds of the wait, and {@code SKIP LOCKED} below one second.
	 */
	@Override
	public boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		long seconds = waitMillis / 1000;
		return lockKeyRowWith(jdbc,
				selectKeyRowSql() + ((seconds == 0) ? " FOR UPDATE SKIP LOCKED" : " FOR UPDATE WAIT " + seconds), key);
	}

	/**
	 * A deadlock (1213), which InnoDB ends by rolling back the victim's whole transaction;
	 * a lock-wait timeout (1205) on a server with {@code innodb_rollback_on_timeout=ON}
	 * (read from the server when one happens: it is not dynamic, so it is the server's
	 * setting since it started).
	 */
	@Override
	protected @Nullable String rolledBackTransaction(JdbcOperations jdbc, Throwable failure) {
		if (hasErrorCode(failure, 1213)) {
			return "a deadlock with another transaction (error 1213), which InnoDB ends by rolling back one of them";
		}
		if (hasErrorCode(failure, 1205) && rollbackOnTimeout(jdbc)) {
			return "its wait ran out (error 1205) on a server with innodb_rollback_on_timeout=ON";
		}
		return null;
	}

	/**
	 * Whether the server rolls back a whole transaction on a lock-wait timeout
	 * ({@code innodb_rollback_on_timeout}); taken as {@code true} if it cannot be told.
	 * @param jdbc runs the query
	 * @return whether it does
	 */
	public boolean rollbackOnTimeout(JdbcOperations jdbc) {
		try {
			return lockWaitTimeoutRollsBackTransaction(jdbc) != null;
		}
		catch (org.springframework.dao.DataAccessException ex) {
			// an outcome that cannot be told is taken as the worse case
			return true;
		}
	}

	/** {@code innodb_rollback_on_timeout}, read from the server (a setting it has since it started). */
	@Override
	public @Nullable String lockWaitTimeoutRollsBackTransaction(JdbcOperations jdbc) {
		Boolean on = jdbc.queryForObject("SELECT @@GLOBAL.innodb_rollback_on_timeout", Boolean.class);
		return Boolean.FALSE.equals(on) ? null : "the server has innodb_rollback_on_timeout=ON";
	}

	/** ER_LOCK_WAIT_TIMEOUT: InnoDB rolls back the statement alone (unless innodb_rollback_on_timeout). */
	@Override
	protected boolean isLockWaitTimeout(Throwable failure) {
		return hasErrorCode(failure, 1205);
	}

	/**
	 * {@code wsrep_on} (Galera) or MySQL group replication in multi-primary mode: each node
	 * gives its own named locks and row locks.
	 */
	@Override
	public @Nullable String multiPrimaryCluster(JdbcOperations jdbc) {
		if ("ON".equalsIgnoreCase(variable(jdbc, "wsrep_on"))) {
			return "this server is a node of a Galera cluster (wsrep_on=ON)";
		}
		if (multiPrimaryGroupReplication(jdbc)) {
			return "this server is a member of a multi-primary group replication "
					+ "(group_replication_single_primary_mode=OFF)";
		}
		return null;
	}

	/**
	 * On Galera: stale unless the session's {@code wsrep_sync_wait} covers reads (1),
	 * updates and deletes (2) and inserts (4). Measured on a 3-member cluster, 4 threads of
	 * one JVM on 16 keys through {@code jdbc:mariadb:loadbalance:}: without it, releases sent
	 * to another member than their acquisition found no row, the keys stayed taken until their
	 * leases ended and throughput fell to about 1 cycle/s; with {@code wsrep_sync_wait=15},
	 * 1,397 cycles/s and nothing lost.
	 */
	@Override
	public @Nullable String staleClusterReads(JdbcOperations jdbc) {
		if (!"ON".equalsIgnoreCase(variable(jdbc, "wsrep_on"))) {
			return staleGroupReplicationReads(jdbc);
		}
		Integer syncWait = jdbc.queryForObject("SELECT @@session.wsrep_sync_wait", Integer.class);
		return (syncWait != null && (syncWait & 7) == 7) ? null
				: "this Galera member's sessions do not wait for causality (wsrep_sync_wait=" + syncWait
						+ "): a release sent to another member than its acquisition can miss the lock's row, so that the "
						+ "key stays taken until its lease ends and the lock is reported lost";
	}

	/**
	 * On MySQL group replication in multi-primary mode, MySQL's analogue of Galera's
	 * {@code wsrep_sync_wait}: stale unless the session's {@code group_replication_consistency}
	 * makes a statement wait for the transactions other members committed before it
	 * ({@code BEFORE}) or a commit wait until every member has applied it ({@code AFTER},
	 * {@code BEFORE_AND_AFTER}). Reviewed, not run here: this machine has no MySQL server.
	 */
	private static @Nullable String staleGroupReplicationReads(JdbcOperations jdbc) {
		String consistency = variable(jdbc, "group_replication_consistency");
		if (consistency == null || !multiPrimaryGroupReplication(jdbc)
				|| List.of("BEFORE", "AFTER", "BEFORE_AND_AFTER").contains(consistency.toUpperCase(java.util.Locale.ROOT))) {
			return null;
		}
		return "this multi-primary group replication member's sessions do not wait for the other members' "
				+ "transactions (group_replication_consistency=" + consistency + "): a release sent to another member "
				+ "than its acquisition can miss the lock's row, so that the key stays taken until its lease ends and "
				+ "the lock is reported lost";
	}

	private static boolean multiPrimaryGroupReplication(JdbcOperations jdbc) {
		return "OFF".equalsIgnoreCase(variable(jdbc, "group_replication_single_primary_mode")) && groupReplicationRuns(jdbc);
	}

	/**
	 * With {@code innodb_autoinc_lock_mode} 0 or 1 the lease and read/write inserts
	 * ({@code INSERT ... SELECT}) hold the table's AUTO-INC lock from their token's draw to
	 * the end of the statement, after the row's index insert; with 2 (MySQL 8's default, and
	 * Galera's requirement) they hold none.
	 */
	@Override
	public @Nullable String tokenOrderWarning(JdbcOperations jdbc) {
		String mode = variable(jdbc, "innodb_autoinc_lock_mode");
		if (!"2".equals(mode)) {
			return null;
		}
		return "the server has innodb_autoinc_lock_mode=2, where InnoDB takes no lock from an insert's AUTO_INCREMENT "
				+ "draw to its index insert: an acquisition whose thread the server deschedules between the two can hold a "
				+ "key after a later holder that drew a larger fencing token. Set innodb_autoinc_lock_mode=1 (not on a "
				+ "Galera cluster, which needs 2) where fenced writes rely on the order of tokens";
	}

	@Override
	public @Nullable String readOnly(JdbcOperations jdbc) {
		return "ON".equalsIgnoreCase(variable(jdbc, "read_only"))
				? "the server is read-only (read_only=ON), as a replica is" : null;
	}

	@Override
	public @Nullable String namedLocksUnavailable(JdbcOperations jdbc) {
		String cluster = multiPrimaryCluster(jdbc);
		return (cluster != null) ? cluster + ", whose nodes each give their own GET_LOCK: callers on different nodes "
				+ "would hold one named lock at once" : null;
	}

	private static @Nullable String variable(JdbcOperations jdbc, String name) {
		List<String> values = jdbc.query("SHOW VARIABLES LIKE ?", (rs, row) -> rs.getString(2), name);
		return values.isEmpty() ? null : values.get(0);
	}

	private static boolean groupReplicationRuns(JdbcOperations jdbc) {
		try {
			Integer online = jdbc.queryForObject("SELECT COUNT(*) FROM performance_schema.replication_group_members "
					+ "WHERE MEMBER_STATE = 'ONLINE'", Integer.class);
			return online != null && online > 0;
		}
		catch (org.springframework.dao.DataAccessException ex) {
			return false;
		}
	}

	/** {@code GET_LOCK} with the wait in seconds (fractions are honoured by MariaDB, cut by MySQL). */
	@Override
	public boolean namedLock(JdbcOperations jdbc, String key, long waitMillis) {
		Integer taken = jdbc.queryForObject("SELECT GET_LOCK(?, ?)", Integer.class, lockName(key),
				java.math.BigDecimal.valueOf(waitMillis, 3));
		return taken != null && taken == 1;
	}

	@Override
	public boolean namedUnlock(JdbcOperations jdbc, String key) {
		Integer released = jdbc.queryForObject("SELECT RELEASE_LOCK(?)", Integer.class, lockName(key));
		return released != null && released == 1;
	}

	/**
	 * One {@code INSERT ... ON DUPLICATE KEY UPDATE} that sets {@code LAST_INSERT_ID(expr)}
	 * to the new token, which the server returns in its reply as the generated key.
	 */
	@Override
	public long nextCountedToken(JdbcOperations jdbc, String key, boolean named) {
		String column = named ? "named_token" : "token";
		String sql = "INSERT INTO " + tokenTable() + " (lock_key, " + column + ") VALUES (?, LAST_INSERT_ID(1)) "
				+ "ON DUPLICATE KEY UPDATE " + column + " = LAST_INSERT_ID(" + column + " + 1)";
		KeyHolder keys = new GeneratedKeyHolder();
		jdbc.update((con) -> {
			PreparedStatement ps = con.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS);
			ps.setString(1, key);
			return ps;
		}, keys);
		// MySQL's driver may list a second key for the row an ON DUPLICATE KEY UPDATE changed: the first is the token
		Object token = keys.getKeyList().isEmpty() ? null : keys.getKeyList().get(0).values().iterator().next();
		return ((Number) Objects.requireNonNull(token, "no token in the reply")).longValue();
	}

	/**
	 * The name of a key's lock, which the server shares among all its databases and holds to
	 * 64 characters: the lock table's name and the key, or, when longer, a SHA-256 digest of
	 * them (two keys whose digests are equal would exclude each other, nothing worse).
	 */
	String lockName(String key) {
		String name = table() + ":" + key;
		if (name.length() <= MAX_LOCK_NAME) {
			return name;
		}
		return "db-lock:" + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(name));
	}

	/** The longest name GET_LOCK takes. */
	private static final int MAX_LOCK_NAME = 64;


	private record ClockOffset(Duration offset, long measuredAt) {
	}

	/**
	 * InnoDB's lock-wait timeout (1205) and deadlock (1213), which is also how a Galera
	 * member reports a certification conflict with another member; and a Galera member not
	 * ready for applications (1047, "WSREP has not yet prepared node", while it joins or is
	 * desynced), which refused the statement before running it: the pool evicts that
	 * connection (its SQLState is of class 08), and the next attempt may reach another member.
	 */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return errorCode == 1205 || errorCode == 1213 || errorCode == 1047;
	}

	@Override
	protected Object instantParameter(Instant instant) {
		return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
	}

	@Override
	protected Instant readInstant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
	}

}
