package io.github.dblock.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

import org.jspecify.annotations.Nullable;

/**
 * What MySQL and MariaDB share: {@code DATETIME(6)} columns in UTC written from
 * {@code UTC_TIMESTAMP(6)}, independent of the session time zone, and InnoDB's lock
 * errors.
 */
abstract class MySqlFamilyDialect extends SqlDialect {

	MySqlFamilyDialect(String name, String table) {
		super(name, table);
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

	/** InnoDB's lock-wait timeout (1205) and deadlock (1213). */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return errorCode == 1205 || errorCode == 1213;
	}

	@Override
	protected Instant readInstant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
	}

}
