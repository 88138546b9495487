package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;


/**
 * H2 2.x, in its own mode and in its MySQL and PostgreSQL compatibility modes: a
 * {@code MERGE ... USING} read through {@code FINAL TABLE} takes a free key or an expired
 * lease, or marks a held key as wanted.
 * <p>
 * H2 has no advisory locks, so the fencing token is drawn only once the key is won: the
 * {@code MERGE} writes the row with a placeholder token ({@code 0}), and, if the row is this
 * owner's, an {@code UPDATE} of that row draws the token ({@code NEXT VALUE FOR}), both in one
 * transaction. The row stays locked from the {@code MERGE} to the commit, and no other
 * attempt can write the key's row, so draw its token, before that commit: a later holder
 * drew later. The placeholder is never seen outside the transaction.
 */
public class H2Dialect extends SqlDialect {

	private final String acquireSql;

	private final String drawTokenSql;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public H2Dialect(String table) {
		super("h2", table);
		this.drawTokenSql = "SELECT token FROM FINAL TABLE (UPDATE " + table()
				+ " SET token = NEXT VALUE FOR " + table() + "_token_seq WHERE lock_key = ? AND owner = ?)";
		this.acquireSql = compact("""
				SELECT owner, token, expires_at FROM FINAL TABLE (
				  MERGE INTO %1$s t
				  USING (VALUES (CAST(? AS VARCHAR(255)), CAST(? AS VARCHAR(128)), CAST(? AS BIGINT))) s(k, o, us)
				  ON t.lock_key = s.k
				  WHEN MATCHED AND t.expires_at <= %2$s THEN UPDATE SET
				    owner = s.o, token = 0,
				    acquired_at = %2$s, expires_at = %3$s, wanted_at = NULL
				  WHEN MATCHED THEN UPDATE SET wanted_at = %2$s
				  WHEN NOT MATCHED THEN INSERT (lock_key, owner, token, acquired_at, expires_at)
				    VALUES (s.k, s.o, 0, %2$s, %3$s))"""
			.formatted(table(), now(), "DATEADD(MICROSECOND, s.us, " + now() + ")"));
	}

	@Override
	public String now() {
		return "CURRENT_TIMESTAMP";
	}

	@Override
	protected String plusMicros(String time) {
		return "DATEADD(MICROSECOND, ?, " + time + ")";
	}

	@Override
	protected String deleteExpiredSql(String table) {
		return "DELETE FROM " + table + " WHERE expires_at <= " + now() + " FETCH FIRST ? ROWS ONLY";
	}

	@Override
	protected String acquireSql() {
		return this.acquireSql;
	}

	/**
	 * The {@code MERGE} of {@link #acquireSql()}, then, if the row is this owner's, the draw
	 * of its token, {@linkplain #inOneTransaction(JdbcOperations, ConnectionCallback) in one
	 * transaction}.
	 */
	@Override
	public Optional<Lease> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		return inOneTransaction(jdbc, (con) -> mergeAndDraw(con, key, owner, lease));
	}

	/**
	 * Runs statements on the one connection of a template in one transaction, rolled back if
	 * they fail; on a connection already in a transaction, within that transaction. The
	 * statements may use the connection or the template.
	 * @param <T> the result's type
	 * @param jdbc statements on one connection
	 * @param statements the statements
	 * @return their result
	 */
	static <T> T inOneTransaction(JdbcOperations jdbc, ConnectionCallback<T> statements) {
		return Objects.requireNonNull(jdbc.execute((ConnectionCallback<T>) (con) -> {
			if (!con.getAutoCommit()) {
				return statements.doInConnection(con);
			}
			con.setAutoCommit(false);
			T result;
			try {
				result = statements.doInConnection(con);
				con.commit();
			}
			catch (SQLException | RuntimeException ex) {
				try {
					con.rollback();
				}
				catch (SQLException rollback) {
					// left as it is, not in autocommit: the pool rolls a connection back before it hands it out again
					ex.addSuppressed(rollback);
					throw ex;
				}
				con.setAutoCommit(true);
				throw ex;
			}
			con.setAutoCommit(true);
			return result;
		}));
	}

	private Optional<Lease> mergeAndDraw(Connection con, String key, String owner, Duration lease) throws SQLException {
		@Nullable Instant expiresAt = null;
		try (PreparedStatement merge = con.prepareStatement(this.acquireSql)) {
			merge.setString(1, key);
			merge.setString(2, owner);
			merge.setLong(3, micros(lease));
			try (ResultSet rs = merge.executeQuery()) {
				if (rs.next() && owner.equals(rs.getString("owner"))) {
					expiresAt = readInstant(rs, "expires_at");
				}
			}
		}
		if (expiresAt == null) {
			return Optional.empty();
		}
		try (PreparedStatement draw = con.prepareStatement(this.drawTokenSql)) {
			draw.setString(1, key);
			draw.setString(2, owner);
			try (ResultSet rs = draw.executeQuery()) {
				if (!rs.next()) {
					throw new IllegalStateException("The row of '" + key + "' that " + owner + " took is gone");
				}
				return Optional.of(new Lease(key, owner, rs.getLong("token"), expiresAt));
			}
		}
	}

	/** Deadlock, lock timeout, concurrent update of a row, concurrent insert of a key. */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return errorCode == 40001 || errorCode == 50200 || errorCode == 90131 || errorCode == 23505;
	}

}
