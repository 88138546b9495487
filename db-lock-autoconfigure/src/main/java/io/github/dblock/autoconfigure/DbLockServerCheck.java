package io.github.dblock.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import io.github.dblock.jdbc.dialect.ServerInspection;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The start-up check of the lock table's server, from its dialect's
 * {@linkplain SqlDialect#inspection() inspection}.
 */
final class DbLockServerCheck {

	private static final Log logger = LogFactory.getLog(DbLockServerCheck.class);

	private DbLockServerCheck() {
	}

	/**
	 * Fails start-up on a server that cannot hold the lock table (a read-only replica or
	 * standby), and warns of a failover that could lose acquisitions and of a driver whose
	 * own failover could hold a caller past its wait and the statement timeout, and of a
	 * server that may give fencing tokens out of order.
	 */
	static void check(DataSource dataSource, SqlDialect dialect, Duration statementTimeout) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		ServerInspection inspection = dialect.inspection();
		String readOnly;
		String failover;
		String cluster;
		String stale;
		String driverFailover;
		String tokenOrder;
		try {
			readOnly = inspection.readOnly(jdbc);
			failover = (readOnly != null) ? null : inspection.failoverWarning(jdbc);
			cluster = inspection.multiPrimaryCluster(jdbc);
			stale = inspection.staleClusterReads(jdbc);
			tokenOrder = inspection.tokenOrderWarning(jdbc);
			String url = jdbc.execute((ConnectionCallback<@Nullable String>) (connection) -> connection.getMetaData().getURL());
			driverFailover = (url != null) ? DriverFailoverCheck.warning(url, statementTimeout) : null;
		}
		catch (DataAccessException ex) {
			// not known: the migration, or the first lock, says what is wrong
			logger.debug("Could not check whether the database can hold db-lock's table", ex);
			return;
		}
		if (readOnly != null) {
			throw new DbLockConfigurationException("db-lock's DataSource points at a server that cannot hold locks: "
					+ readOnly + ". Locks kept there would not be the primary's, and writing them fails.",
					"Point db-lock at the primary: the application's spring.datasource.url, or db-lock.data-source "
							+ "naming a DataSource of the primary.");
		}
		if (stale != null) {
			throw new DbLockConfigurationException("db-lock's DataSource reaches a cluster where " + stale + ".",
					stale.contains("group_replication")
							? "Make db-lock's connections wait for the other members: add "
									+ "sessionVariables=group_replication_consistency='BEFORE' to the JDBC URL, or set "
									+ "spring.datasource.hikari.connection-init-sql=SET SESSION "
									+ "group_replication_consistency='BEFORE'."
							: "Make db-lock's connections wait for causality: add sessionVariables=wsrep_sync_wait=15 to "
									+ "the JDBC URL (jdbc:mariadb:loadbalance://m1,m2,m3/db?sessionVariables=wsrep_sync_wait=15), "
									+ "or set spring.datasource.hikari.connection-init-sql=SET SESSION wsrep_sync_wait=15.");
		}
		if (failover != null) {
			logger.warn(failover + " (see docs/clustered-databases.md)");
		}
		if (driverFailover != null) {
			logger.warn(driverFailover);
		}
		if (tokenOrder != null) {
			logger.warn("db-lock: " + tokenOrder + " (see docs/guarantees.md, \"What it does not guarantee\")");
		}
		if (cluster != null) {
			logger.info("db-lock: " + cluster + ". The lease mode holds here: its rows are certified cluster-wide, and "
					+ "a conflict between members is an attempt that did not acquire, retried. The named and transaction "
					+ "modes are refused: each member gives its own named locks and row locks.");
		}
	}

}
