package io.github.dblock.jdbc;

import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;

/**
 * MySQL 8: a plain {@code INSERT} takes a free key, its {@code AUTO_INCREMENT} column
 * gives the fencing token (persisted across restarts since 8.0), and an expired lease is
 * deleted by a statement that checks expiry with {@code UTC_TIMESTAMP(6)} before the
 * insert is tried once more. MySQL has no {@code RETURNING}: the lease end reported to the
 * caller is the database's time estimated from an offset measured once, rounded down;
 * the database alone decides expiry.
 */
public class MySqlDialect extends MySqlFamilyDialect {

	private final String insertSql;

	private final String deleteExpiredKeySql;

	private volatile @Nullable Duration clockOffset;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public MySqlDialect(String table) {
		super("mysql", table);
		this.insertSql = compact("""
				INSERT INTO %1$s (lock_key, owner, acquired_at, expires_at)
				VALUES (?, ?, %2$s, %3$s)""".formatted(table(), now(), plusMicros(now())));
		this.deleteExpiredKeySql = "DELETE FROM %s WHERE lock_key = ? AND expires_at <= %s".formatted(table(), now());
	}

	@Override
	protected String acquireSql() {
		return this.insertSql;
	}

	@Override
	public Optional<Lease> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		Duration offset = clockOffset(jdbc);
		try {
			return Optional.of(insert(jdbc, key, owner, lease, offset));
		}
		catch (DuplicateKeyException held) {
			if (jdbc.update(this.deleteExpiredKeySql, key) == 0) {
				return Optional.empty();
			}
			try {
				return Optional.of(insert(jdbc, key, owner, lease, offset));
			}
			catch (DuplicateKeyException lostRace) {
				return Optional.empty();
			}
		}
	}

	private Lease insert(JdbcOperations jdbc, String key, String owner, Duration lease, Duration offset) {
		Instant sentAt = Instant.now();
		KeyHolder keys = new GeneratedKeyHolder();
		jdbc.update((con) -> {
			PreparedStatement ps = con.prepareStatement(this.insertSql, Statement.RETURN_GENERATED_KEYS);
			ps.setString(1, key);
			ps.setString(2, owner);
			ps.setLong(3, micros(lease));
			return ps;
		}, keys);
		return new Lease(key, owner, java.util.Objects.requireNonNull(keys.getKey()).longValue(), sentAt.plus(offset).plus(lease));
	}

	private Duration clockOffset(JdbcOperations jdbc) {
		Duration offset = this.clockOffset;
		if (offset == null) {
			LocalDateTime dbNow = jdbc.queryForObject("SELECT " + now(), LocalDateTime.class);
			Instant after = Instant.now();
			// the database read its clock before this instant: the offset errs towards an earlier lease end
			offset = Duration.between(after, dbNow.toInstant(ZoneOffset.UTC));
			this.clockOffset = offset;
		}
		return offset;
	}

	/** InnoDB's lock errors, and {@code NOWAIT} finding a row locked (3572). */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return super.isContention(errorCode, sqlState) || errorCode == 3572;
	}

}
