package io.github.dblock.jdbc.dialect;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;

/**
 * What MySQL and MariaDB share. An {@code INSERT IGNORE} takes a free key, and its
 * {@code AUTO_INCREMENT} column gives the fencing token in the reply, persisted across
 * restarts (MySQL 8.0, MariaDB 10.2.4 and later). On a duplicate key, an {@code UPDATE}
 * marks a lease that has not expired as wanted (by {@code UTC_TIMESTAMP(6)}), and if there
 * was none, a {@code DELETE} that checks expiry removes an expired lease and the insert is
 * tried once more. Times are {@code DATETIME(6)} in UTC, independent of the session time
 * zone. Neither database returns values from an {@code INSERT} in its reply, so the lease
 * end reported to the caller is the database's time estimated from an offset measured every
 * minute, never later than the database's; the database alone decides expiry.
 * <p>
 * The insert is an {@code INSERT ... SELECT ... FROM DUAL}, not an {@code INSERT ... VALUES}:
 * with {@code innodb_autoinc_lock_mode} 0 or 1, InnoDB holds the table's {@code AUTO-INC}
 * lock for such a statement from the token's allocation to the end of the statement, after
 * the row's index insert, so that tokens are drawn in the order rows are inserted and a
 * later holder of a key drew later. With {@code innodb_autoinc_lock_mode} 2 it takes no
 * such lock (see {@link ServerInspection#tokenOrderWarning}).
 */
abstract class MySqlFamilyDialect extends SqlDialect {

	/** ER_DUP_ENTRY. */
	private static final int DUPLICATE_KEY = 1062;

	/** How long a measured clock offset is used before it is measured again. */
	private static final long CLOCK_OFFSET_AGE_NANOS = Duration.ofMinutes(1).toNanos();

	/** The longest name GET_LOCK takes. */
	private static final int MAX_LOCK_NAME = 64;

	private final MySqlFamilyInspection inspection;

	private final SqlErrors errors;

	private final String insertSql;

	private final String deleteExpiredKeySql;

	private final String markWantedSql;

	private volatile @Nullable ClockOffset clockOffset;

	MySqlFamilyDialect(Database database, String table) {
		super(database, table);
		this.inspection = new MySqlFamilyInspection(database.id());
		this.errors = new MySqlFamilyErrors(this.inspection);
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
	public ServerInspection inspection() {
		return this.inspection;
	}

	@Override
	public SqlErrors errors() {
		return this.errors;
	}

	@Override
	public String now() {
		return "UTC_TIMESTAMP(6)";
	}

	@Override
	public String plusMicros(String time) {
		return time + " + INTERVAL ? MICROSECOND";
	}

	@Override
	public String deleteExpiredSql(String table) {
		return "DELETE FROM " + table + " WHERE expires_at <= " + now() + " LIMIT ?";
	}

	@Override
	protected String acquireSql() {
		return this.insertSql;
	}

	/** {@code INSERT IGNORE}. */
	@Override
	public String insertUnlessKeyExists(String table, String columns, String values) {
		return "INSERT IGNORE INTO " + table + " (" + columns + ") VALUES (" + values + ")";
	}

	/** {@code INSERT IGNORE}: no error, so no error logged by the driver, for a key taken. */
	@Override
	public String insertUnlessPrimaryKeyExists(String table, String columns, String values) {
		return "INSERT IGNORE INTO " + table + " (" + columns + ") VALUES (" + values + ")";
	}

	/** Tokens come from the holders' table's {@code AUTO_INCREMENT}. */
	@Override
	public @Nullable String holderTokenValue() {
		return null;
	}

	/** {@code LOCK IN SHARE MODE}, which MySQL 8 takes as well as MariaDB. */
	@Override
	public String sharedRowLock() {
		return " LOCK IN SHARE MODE";
	}

	/** {@code FROM DUAL}. */
	@Override
	public String fromNoTable() {
		return " FROM DUAL";
	}

	/**
	 * A multi-table {@code DELETE}, which deletes nothing if the writer's row is gone: key,
	 * owner, token.
	 */
	@Override
	public String releaseWriterSql(String holders, String intents) {
		return "DELETE h, i FROM " + holders + " h LEFT JOIN " + intents
				+ " i ON i.lock_key = h.lock_key AND i.owner = h.owner WHERE h.lock_key = ? AND h.owner = ? AND h.token = ?";
	}

	/** The ticket's number is the queue's {@code AUTO_INCREMENT}. */
	@Override
	public String fairEnqueueSql(String queue, String keys, String lease) {
		return "INSERT INTO %s (lock_key, owner, expires_at) SELECT lock_key, ?, %s FROM %s WHERE lock_key = ? FOR UPDATE"
			.formatted(queue, lease, keys);
	}

	@Override
	public boolean ticketIsGeneratedKey() {
		return true;
	}

	@Override
	public Optional<AcquiredRow> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		Duration offset = clockOffset(jdbc);
		AcquiredRow inserted = insert(jdbc, key, owner, lease, offset);
		if (inserted == null && jdbc.update(this.markWantedSql, key) == 0 && jdbc.update(this.deleteExpiredKeySql, key) == 1) {
			inserted = insert(jdbc, key, owner, lease, offset);
		}
		return Optional.ofNullable(inserted);
	}

	/** The new row, or {@code null} if the key has a row. */
	private @Nullable AcquiredRow insert(JdbcOperations jdbc, String key, String owner, Duration lease,
			Duration offset) {
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
			if (SqlErrors.hasErrorCode(ex, DUPLICATE_KEY)) {
				return null;
			}
			throw ex;
		}
		if (inserted == 0) {
			// ignored: the key has a row
			return null;
		}
		long token = Objects.requireNonNull(keys.getKey(), "no generated token").longValue();
		return new AcquiredRow(token, sentAt.plus(offset).plus(lease));
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

	/**
	 * {@code FOR UPDATE WAIT n} counts whole seconds (a fraction is cut to 0): the whole
	 * seconds of the wait, and {@code SKIP LOCKED} below one second.
	 */
	@Override
	public boolean lockKeyRow(JdbcOperations jdbc, String key, long waitMillis) {
		long seconds = waitMillis / 1000;
		return !jdbc.queryForList(
				selectKeyRowSql() + ((seconds == 0) ? " FOR UPDATE SKIP LOCKED" : " FOR UPDATE WAIT " + seconds),
				Integer.class, key)
			.isEmpty();
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

	@Override
	public Object instantParameter(Instant instant) {
		return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
	}

	@Override
	public Instant readInstant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
	}

	private record ClockOffset(Duration offset, long measuredAt) {
	}

}
