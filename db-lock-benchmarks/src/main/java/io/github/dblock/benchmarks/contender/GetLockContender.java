package io.github.dblock.benchmarks.contender;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

/**
 * MariaDB's and MySQL's {@code GET_LOCK}/{@code RELEASE_LOCK}: the server waits for the
 * lock, and the lock lives on the session, so the connection stays taken while it is
 * held. Not durable (gone with the connection); the floor for two round trips. On
 * PostgreSQL, {@code pg_advisory_lock}/{@code pg_advisory_unlock} on the key's
 * {@code hashtextextended}: the server has no wait limit for it, so the statement's query
 * timeout (the driver cancels it) ends a wait of {@link LockTimes#WAIT}.
 */
final class GetLockContender extends AcquireReleaseContender<Connection> {

	/** PostgreSQL's state for a cancelled statement. */
	private static final String QUERY_CANCELED = "57014";

	private final DataSource dataSource;

	private final boolean postgresql;

	private final String lock;

	private final String unlock;

	GetLockContender(DataSource dataSource, boolean prepare) {
		this.dataSource = dataSource;
		this.postgresql = Databases.postgresql(dataSource);
		this.lock = this.postgresql ? "SELECT pg_advisory_lock(hashtextextended(?, 0)), 1"
				: "SELECT GET_LOCK(?, " + LockTimes.WAIT.toSeconds() + ")";
		this.unlock = this.postgresql ? "SELECT CASE WHEN pg_advisory_unlock(hashtextextended(?, 0)) THEN 1 ELSE 0 END"
				: "SELECT RELEASE_LOCK(?)";
	}

	@Override
	@Nullable Connection acquire(String key) throws SQLException {
		Connection connection = this.dataSource.getConnection();
		boolean acquired = false;
		try {
			acquired = selectOne(connection, this.lock, key, this.postgresql);
			return acquired ? connection : null;
		}
		catch (SQLException ex) {
			if (this.postgresql && QUERY_CANCELED.equals(ex.getSQLState())) {
				return null;
			}
			throw ex;
		}
		finally {
			if (!acquired) {
				connection.close();
			}
		}
	}

	@Override
	void release(String key, Connection held) throws SQLException {
		try (held) {
			selectOne(held, this.unlock, key, false);
		}
	}

	private static boolean selectOne(Connection connection, String sql, String key, boolean timeout)
			throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			if (timeout) {
				statement.setQueryTimeout((int) LockTimes.WAIT.toSeconds());
			}
			statement.setString(1, key);
			try (ResultSet rs = statement.executeQuery()) {
				return rs.next() && rs.getInt(rs.getMetaData().getColumnCount()) == 1;
			}
		}
	}

}
