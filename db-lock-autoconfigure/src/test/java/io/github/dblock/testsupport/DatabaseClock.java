package io.github.dblock.testsupport;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import io.github.dblock.jdbc.dialect.SqlDialect;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Reads the database's clock the way the dialect writes lease times.
 */
public final class DatabaseClock {

	private DatabaseClock() {
	}

	/** The database's now, by the dialect's own expression. */
	public static Instant now(JdbcTemplate jdbc, SqlDialect dialect) {
		return jdbc.queryForObject("SELECT " + dialect.now(), (rs, i) -> {
			Object value = rs.getObject(1);
			if (value instanceof OffsetDateTime offset) {
				return offset.toInstant();
			}
			if (value instanceof LocalDateTime local) {
				return local.toInstant(ZoneOffset.UTC);
			}
			return rs.getObject(1, OffsetDateTime.class).toInstant();
		});
	}

}
