package io.github.dblock.autoconfigure;

import java.sql.SQLException;
import java.time.Duration;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * A small pool of db-lock's own for its lock statements ({@code db-lock.pool.size}), with
 * the settings of the application's Hikari pool (URL, credentials, driver properties) but
 * its own size and connection timeout, in autocommit, and a validation timeout no longer than
 * the connection timeout. The lock statements then never wait
 * for a connection that the application's own transactions hold: a {@code @DbLock} method
 * called inside outer transactions that hold every connection of the application's pool
 * still takes and releases its lock. It is not a {@link DataSource} bean, so it does not
 * change which data source the application's other beans get.
 *
 * @since 0.1.0
 */
public final class DbLockConnectionPool implements AutoCloseable {

	/** Typed as a {@code DataSource} so that loading this class does not need Hikari's. */
	private final DataSource dataSource;

	/**
	 * Creates the pool.
	 * @param application the application's data source, a {@link HikariDataSource} or a
	 * wrapper of one
	 * @param size the most connections
	 * @param connectionTimeout the longest a lock statement waits for a connection (less
	 * when its call's deadline comes first), and the longest the pool checks an idle
	 * connection before handing it out (unless the application's pool checks for less)
	 * @throws IllegalStateException if the application's data source is not Hikari's
	 */
	public DbLockConnectionPool(DataSource application, int size, Duration connectionTimeout) {
		HikariDataSource hikari = hikari(application);
		HikariConfig config = new HikariConfig();
		hikari.copyStateTo(config);
		config.setPoolName(((hikari.getPoolName() != null) ? hikari.getPoolName() : "HikariPool") + "-db-lock");
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(1);
		config.setAutoCommit(true);
		config.setReadOnly(false);
		// Hikari's own floor is 250 ms
		config.setConnectionTimeout(Math.max(250, connectionTimeout.toMillis()));
		// the check of an idle connection before it is handed out may run past a caller's deadline by this much
		config.setValidationTimeout(Math.min(config.getValidationTimeout(), config.getConnectionTimeout()));
		config.setInitializationFailTimeout(-1);
		this.dataSource = new HikariDataSource(config);
	}

	/**
	 * The pool, for the lock repository.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.dataSource;
	}

	@Override
	public void close() {
		((HikariDataSource) this.dataSource).close();
	}

	private static HikariDataSource hikari(DataSource application) {
		if (application instanceof HikariDataSource hikari) {
			return hikari;
		}
		try {
			if (application.isWrapperFor(HikariDataSource.class)) {
				return application.unwrap(HikariDataSource.class);
			}
		}
		catch (SQLException ex) {
			// not a wrapper: reported below
		}
		throw new IllegalStateException("db-lock.pool.size needs the application's DataSource to be a "
				+ "HikariDataSource (Spring Boot's default), whose settings it copies; it is a "
				+ application.getClass().getName() + ". Leave db-lock.pool.size unset to share the application's pool");
	}

}
