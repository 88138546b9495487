package io.github.dblock.jdbc.dialect;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * What a PostgreSQL server is set up to do: a standby in recovery, standbys streaming
 * asynchronously; it has named locks ({@code pg_advisory_lock}).
 */
class PostgreSqlInspection extends ServerInspection {

	PostgreSqlInspection() {
		super("postgresql");
	}

	@Override
	public @Nullable String namedLocksUnavailable(JdbcOperations jdbc) {
		return null;
	}

	@Override
	public @Nullable String readOnly(JdbcOperations jdbc) {
		return Boolean.TRUE.equals(jdbc.queryForObject("SELECT pg_is_in_recovery()", Boolean.class))
				? "the server is a standby in recovery (pg_is_in_recovery() is true)" : null;
	}

	@Override
	public @Nullable String failoverWarning(JdbcOperations jdbc) {
		Integer standbys = jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_replication", Integer.class);
		String synchronous = jdbc.queryForObject("SELECT current_setting('synchronous_standby_names')", String.class);
		if (standbys == null || standbys == 0 || (synchronous != null && !synchronous.isBlank())) {
			return null;
		}
		return "PostgreSQL streams to " + standbys + " standby(s) asynchronously (synchronous_standby_names is empty): "
				+ "a failover to one may lose the last acquisitions, committed here and not yet there, and a new "
				+ "holder there may be given a key still held, with a smaller fencing token. Set "
				+ "synchronous_standby_names (and synchronous_commit=on, the default) for locks that survive a failover";
	}

}
