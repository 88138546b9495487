package io.github.dblock.jdbc.dialect;

import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * What a MySQL or MariaDB server is set up to do: read-only ({@code read_only}), a Galera
 * node ({@code wsrep_on}) or a member of a multi-primary group replication, whose sessions
 * wait for causality or not ({@code wsrep_sync_wait}, {@code group_replication_consistency}),
 * its {@code innodb_rollback_on_timeout} and {@code innodb_autoinc_lock_mode}.
 */
class MySqlFamilyInspection extends ServerInspection {

	MySqlFamilyInspection(String database) {
		super(database);
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

	/** {@code innodb_rollback_on_timeout}, a setting the server has since it started. */
	@Override
	public @Nullable String lockWaitTimeoutRollsBackTransaction(JdbcOperations jdbc) {
		Boolean on = jdbc.queryForObject("SELECT @@GLOBAL.innodb_rollback_on_timeout", Boolean.class);
		return Boolean.FALSE.equals(on) ? null : "the server has innodb_rollback_on_timeout=ON";
	}

	/**
	 * Whether the server rolls back a whole transaction on a lock-wait timeout
	 * ({@code innodb_rollback_on_timeout}).
	 * @param jdbc runs the query
	 * @return whether it does; {@code true} if it cannot be told
	 */
	boolean rollbackOnTimeout(JdbcOperations jdbc) {
		try {
			return lockWaitTimeoutRollsBackTransaction(jdbc) != null;
		}
		catch (DataAccessException ex) {
			// an outcome that cannot be told is taken as the worse case
			return true;
		}
	}

	/**
	 * On Galera: stale unless the session's {@code wsrep_sync_wait} covers reads (1),
	 * updates and deletes (2) and inserts (4); on group replication, see
	 * {@link #staleGroupReplicationReads}.
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
	 * {@code BEFORE_AND_AFTER}).
	 */
	private static @Nullable String staleGroupReplicationReads(JdbcOperations jdbc) {
		String consistency = variable(jdbc, "group_replication_consistency");
		if (consistency == null || !multiPrimaryGroupReplication(jdbc)
				|| List.of("BEFORE", "AFTER", "BEFORE_AND_AFTER").contains(consistency.toUpperCase(Locale.ROOT))) {
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
		catch (DataAccessException ex) {
			return false;
		}
	}

}
