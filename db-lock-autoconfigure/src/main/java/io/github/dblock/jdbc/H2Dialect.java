package io.github.dblock.jdbc;

import org.jspecify.annotations.Nullable;


/**
 * H2 2.x, in its own mode and in its MySQL and PostgreSQL compatibility modes: a
 * {@code MERGE ... USING} read through {@code FINAL TABLE} takes a free key or an expired
 * lease, or marks a held key as wanted, in one statement.
 */
public class H2Dialect extends SqlDialect {

	private final String acquireSql;

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public H2Dialect(String table) {
		super("h2", table);
		this.acquireSql = compact("""
				SELECT owner, token, expires_at FROM FINAL TABLE (
				  MERGE INTO %1$s t
				  USING (VALUES (CAST(? AS VARCHAR(255)), CAST(? AS VARCHAR(128)), CAST(? AS BIGINT))) s(k, o, us)
				  ON t.lock_key = s.k
				  WHEN MATCHED AND t.expires_at <= %2$s THEN UPDATE SET
				    owner = s.o, token = NEXT VALUE FOR %1$s_token_seq,
				    acquired_at = %2$s, expires_at = %3$s, wanted_at = NULL
				  WHEN MATCHED THEN UPDATE SET wanted_at = %2$s
				  WHEN NOT MATCHED THEN INSERT (lock_key, owner, token, acquired_at, expires_at)
				    VALUES (s.k, s.o, NEXT VALUE FOR %1$s_token_seq, %2$s, %3$s))"""
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

	/** Deadlock, lock timeout, concurrent update of a row, concurrent insert of a key. */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return errorCode == 40001 || errorCode == 50200 || errorCode == 90131 || errorCode == 23505;
	}

}
