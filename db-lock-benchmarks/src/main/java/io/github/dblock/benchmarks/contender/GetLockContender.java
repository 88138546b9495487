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
 * held. Not durable (gone with the connection); the floor for two round trips.
 */
final class GetLockContender extends AcquireReleaseContender<Connection> {

	private final DataSource dataSource;

	GetLockContender(DataSource dataSource, boolean prepare) {
		this.dataSource = dataSource;
	}

	@Override
	@Nullable Connection acquire(String key) throws SQLException {
		Connection connection = this.dataSource.getConnection();
		boolean acquired = false;
		try {
			acquired = selectOne(connection, "SELECT GET_LOCK(?, " + LockTimes.WAIT.toSeconds() + ")", key);
			return acquired ? connection : null;
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
			selectOne(held, "SELECT RELEASE_LOCK(?)", key);
		}
	}

	private static boolean selectOne(Connection connection, String sql, String key) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setString(1, key);
			try (ResultSet rs = statement.executeQuery()) {
				return rs.next() && rs.getInt(1) == 1;
			}
		}
	}

}
