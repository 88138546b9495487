package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

import org.springframework.util.ClassUtils;

/**
 * How a lock statement gets its connection within the time it is given (the statement
 * timeout or what is left of its call's {@link StatementDeadline}, whichever is less): from
 * a Hikari pool ({@link HikariDataSource} itself, not a
 * wrapper of one) through {@link HikariPool#getConnection(long)}, waiting at most that long
 * (and never longer than the pool's own connection timeout); from any other data source
 * through {@link DataSource#getConnection()}, whose wait is the pool's own.
 * <p>
 * Hikari checks a connection idle for over half a second before handing it out, with its
 * {@code validationTimeout} as that check's limit: the check can run that long past the
 * time given, so a caller's bound includes it.
 */
abstract class PoolWait {

	private static final boolean HIKARI_PRESENT = ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource",
			PoolWait.class.getClassLoader());

	/**
	 * The way to get connections of a data source.
	 * @param dataSource the lock statements' data source
	 * @return a bounded wait for a Hikari pool, else the data source's own
	 */
	static PoolWait of(DataSource dataSource) {
		if (HIKARI_PRESENT && Hikari.isHikari(dataSource)) {
			return new Hikari(dataSource);
		}
		return new Unbounded(dataSource);
	}

	/**
	 * A connection, within {@code millis} where the pool lets it be bounded.
	 * @param millis how long the caller may wait for it
	 * @return the connection
	 * @throws SQLException if there is none within that time
	 */
	abstract Connection getConnection(long millis) throws SQLException;

	/**
	 * Whether {@link #getConnection(long)} keeps to the time it is given (plus the pool's
	 * validation of the connection).
	 */
	abstract boolean isBounded();

	/**
	 * Makes sure a connection taken from this pool is not handed out again once it is given
	 * back: for one whose session state could not be put back.
	 * @param connection the connection, still taken
	 */
	abstract void evict(Connection connection);

	private static final class Unbounded extends PoolWait {

		private final DataSource dataSource;

		Unbounded(DataSource dataSource) {
			this.dataSource = dataSource;
		}

		@Override
		Connection getConnection(long millis) throws SQLException {
			return this.dataSource.getConnection();
		}

		@Override
		boolean isBounded() {
			return false;
		}

		@Override
		void evict(Connection connection) {
			try {
				// the pool finds it closed when it checks it
				connection.abort(Runnable::run);
			}
			catch (SQLException | RuntimeException | AbstractMethodError ex) {
				// a connection that cannot abort: closed as it is
			}
		}

	}

	private static final class Hikari extends PoolWait {

		private final HikariDataSource dataSource;

		Hikari(DataSource dataSource) {
			this.dataSource = (HikariDataSource) dataSource;
		}

		static boolean isHikari(DataSource dataSource) {
			return dataSource instanceof HikariDataSource;
		}

		@Override
		Connection getConnection(long millis) throws SQLException {
			// the pool is started by the data source's first connection (Spring Boot's is lazy)
			if (!this.dataSource.isClosed() && this.dataSource.getHikariPoolMXBean() instanceof HikariPool pool) {
				return pool.getConnection(Math.max(1, Math.min(millis, this.dataSource.getConnectionTimeout())));
			}
			return this.dataSource.getConnection();
		}

		@Override
		boolean isBounded() {
			return true;
		}

		@Override
		void evict(Connection connection) {
			// closed when it comes back
			this.dataSource.evictConnection(connection);
		}

	}

}
