package io.github.dblock.jdbc.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

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
 *
 * @since 0.1.0
 */
public class H2Dialect extends SqlDialect {

	/**
	 * What Spring does not map as contention on H2: a deadlock (40001), a concurrent update
	 * of a row (90131), and a concurrent insert of a key (23505, a duplicate key to Spring).
	 */
	private static final SqlErrors ERRORS = new SqlErrors(Set.of(40001, 90131, 23505));

	private final String acquireSql;

	private final String drawTokenSql;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public H2Dialect(String table) {
		super(Database.H2, table);
		this.drawTokenSql = drawTokenAfterInsertSql(table(), "");
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
	public SqlErrors errors() {
		return ERRORS;
	}

	@Override
	public String now() {
		return "CURRENT_TIMESTAMP";
	}

	@Override
	public String plusMicros(String time) {
		return "DATEADD(MICROSECOND, ?, " + time + ")";
	}

	@Override
	public String deleteExpiredSql(String table) {
		return "DELETE FROM " + table + " WHERE expires_at <= " + now() + " FETCH FIRST ? ROWS ONLY";
	}

	@Override
	protected String acquireSql() {
		return this.acquireSql;
	}

	/** {@code FINAL TABLE}. */
	@Override
	public String insertReturning(String insert, String columns) {
		return "SELECT " + columns + " FROM FINAL TABLE (" + insert + ")";
	}

	/** A placeholder, {@code 0}: the token is drawn after the insert. */
	@Override
	public String holderTokenValue() {
		return "0";
	}

	/** An {@code UPDATE} read through {@code FINAL TABLE} that draws from the lease tokens' sequence. */
	@Override
	public String drawTokenAfterInsertSql(String table, String alsoWhere) {
		return "SELECT token, expires_at FROM FINAL TABLE (UPDATE " + table + " SET token = NEXT VALUE FOR " + table()
				+ "_token_seq WHERE lock_key = ? AND owner = ?" + alsoWhere + ")";
	}

	/**
	 * {@code FOR UPDATE}: H2 has no shared row lock; an exclusive one orders a take-over after
	 * the commit as well.
	 */
	@Override
	public String sharedRowLock() {
		return " FOR UPDATE";
	}

	/**
	 * None: H2's {@code CURRENT_TIMESTAMP} is the transaction's start. The JVM's clock is
	 * read instead, which is the database's for an embedded H2.
	 */
	@Override
	public @Nullable String statementNow() {
		return null;
	}

	@Override
	public String keyParameter() {
		return "CAST(? AS VARCHAR(255))";
	}

	@Override
	public String ownerParameter() {
		return "CAST(? AS VARCHAR(128))";
	}

	@Override
	public String fairEnqueueSql(String queue, String keys, String lease) {
		return compact("""
				SELECT ticket FROM FINAL TABLE (INSERT INTO %1$s (ticket, lock_key, owner, expires_at)
				SELECT NEXT VALUE FOR %2$s_token_seq, lock_key, ?, %3$s FROM %4$s WHERE lock_key = ? FOR UPDATE)""")
			.formatted(queue, table(), lease, keys);
	}

	/**
	 * The {@code MERGE} of {@link #acquireSql()}, then, if the row is this owner's, the draw
	 * of its token, {@linkplain OneTransaction#run(JdbcOperations, ConnectionCallback) in one
	 * transaction}.
	 */
	@Override
	public Optional<AcquiredRow> tryAcquire(JdbcOperations jdbc, String key, String owner, Duration lease) {
		return OneTransaction.run(jdbc, (con) -> mergeAndDraw(con, key, owner, lease));
	}

	private Optional<AcquiredRow> mergeAndDraw(Connection con, String key, String owner, Duration lease) throws SQLException {
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
				return Optional.of(new AcquiredRow(rs.getLong("token"), expiresAt));
			}
		}
	}

}
