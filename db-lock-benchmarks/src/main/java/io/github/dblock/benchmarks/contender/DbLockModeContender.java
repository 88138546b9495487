package io.github.dblock.benchmarks.contender;

import java.util.stream.Stream;

import javax.sql.DataSource;

import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * db-lock's connection-bound modes through {@link DbLockTemplate#acquire(DbLockMode, String,
 * java.time.Duration)}, on an engine built as the auto-configuration builds it (with a
 * {@link JdbcConnectionLockRepository}), waiting up to {@link LockTimes#WAIT}:
 * <ul>
 * <li>{@link DbLockMode#TRANSACTION}: each cycle is a transaction of a
 * {@link TransactionTemplate} over a {@link DataSourceTransactionManager}, in which the key's
 * row of {@code bench_db_lock_keys} is locked; the commit releases it;</li>
 * <li>{@link DbLockMode#NAMED}: {@code GET_LOCK} on a pooled connection, held until the
 * handle is closed;</li>
 * <li>{@link DbLockMode#READ}, {@link DbLockMode#WRITE} and {@link DbLockMode#FAIR}: a row
 * of their own tables with the default lease, renewed while held.</li>
 * </ul>
 * With {@code readToken}, the critical section reads the handle's fencing token first, which
 * draws it (one statement in the transaction mode, two in the named mode on MariaDB/MySQL).
 * With {@code rowsExist}, the key rows are inserted before the run, as the hand-written
 * contender's are: what is left of the cost of a key this JVM has not locked before.
 */
final class DbLockModeContender implements LockContender {

	/** The template contender's table: its key table is {@code bench_db_lock_keys}. */
	static final String TABLE = DbLockTemplateContender.TABLE;

	private final DbLockMode mode;

	private final boolean readToken;

	private final boolean rowsExist;

	private final JdbcTemplate jdbc;

	private final String keyTable;

	private final LockEngine engine;

	private final DbLockTemplate template;

	private final TransactionTemplate transactions;

	private final boolean postgresql;

	DbLockModeContender(DataSource dataSource, boolean prepare, DbLockMode mode, boolean readToken) {
		this(dataSource, prepare, mode, readToken, false);
	}

	DbLockModeContender(DataSource dataSource, boolean prepare, DbLockMode mode, boolean readToken, boolean rowsExist) {
		this.mode = mode;
		this.readToken = readToken;
		this.rowsExist = rowsExist;
		this.jdbc = new JdbcTemplate(dataSource);
		this.postgresql = Databases.postgresql(dataSource);
		SqlDialect dialect = SqlDialects.detect(dataSource, TABLE);
		this.keyTable = dialect.keyTable();
		if (prepare) {
			// V3 creates the key table, V4 and V5 the read/write and fair tables
			new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
			// key rows of runs an hour ago and more (keys start with the run id, "r" and its start in base 36)
			this.jdbc.update("DELETE FROM " + this.keyTable + " WHERE lock_key LIKE 'r%' AND "
					+ "lock_key < ?", "r" + Long.toString(System.currentTimeMillis() - 3_600_000, 36));
		}
		JdbcLockRepository leases = new JdbcLockRepository(dataSource, dialect);
		this.engine = new LockEngine(leases, new JdbcConnectionLockRepository(leases.connections(), dataSource),
				LockEngineSettings.of(LockTimes.BACKOFF));
		this.template = new DbLockTemplate(this.engine, "", LockTimes.WAIT, LockTimes.LEASE);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
	}

	@Override
	public boolean runLocked(String key, Runnable criticalSection) {
		if (this.mode == DbLockMode.TRANSACTION) {
			return Boolean.TRUE.equals(this.transactions.execute((status) -> locked(key, criticalSection)));
		}
		return locked(key, criticalSection);
	}

	private boolean locked(String key, Runnable criticalSection) {
		LockHandle handle;
		try {
			handle = this.template.acquire(this.mode, key, LockTimes.WAIT);
		}
		catch (LockAcquisitionException ex) {
			return false;
		}
		try (handle) {
			if (this.readToken) {
				handle.fencingToken();
			}
			criticalSection.run();
		}
		return true;
	}

	@Override
	public void prepareKeys(Stream<String> keys) {
		if (this.rowsExist) {
			SelectForUpdateContender.insertRows(this.jdbc, this.keyTable, keys, this.postgresql);
		}
	}

	/** Closes the engine, as closing the application context would. */
	@Override
	public void close() {
		this.engine.close();
	}

}
