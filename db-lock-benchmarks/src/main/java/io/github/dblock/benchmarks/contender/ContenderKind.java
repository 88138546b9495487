package io.github.dblock.benchmarks.contender;

import java.util.Set;

import javax.sql.DataSource;

import io.github.dblock.DbLockMode;
import org.jspecify.annotations.Nullable;

/**
 * The contenders, in the order the tables list them.
 */
public enum ContenderKind {

	/** db-lock's {@code DbLockTemplate}. */
	DB_LOCK("db-lock", true, DbLockTemplateContender::new),

	/** db-lock's {@code @DbLock} through a Spring proxy. */
	DB_LOCK_ANNOTATION("@DbLock", true, DbLockAnnotationContender::new),

	/** ShedLock's JDBC template provider. */
	SHEDLOCK("ShedLock", true, ShedLockContender::new),

	/** Spring Integration's JDBC lock registry. */
	JDBC_LOCK_REGISTRY("JdbcLockRegistry", true, JdbcLockRegistryContender::new),

	/** The database's session locks: {@code GET_LOCK}, on PostgreSQL {@code pg_advisory_lock}. */
	GET_LOCK("GET_LOCK", false, GetLockContender::new),

	/** The seed documents' INSERT/DELETE pattern. */
	RAW_INSERT_DELETE("INSERT/DELETE", true, (dataSource, prepare) -> new RawInsertDeleteContender(dataSource, prepare, false)),

	/** The same pattern on a row shaped like db-lock's (token and expiry indexes): what the row costs. */
	RAW_ON_LEASE_ROW("INSERT/DELETE, db-lock's row", true,
			(dataSource, prepare) -> new RawInsertDeleteContender(dataSource, prepare, true)),

	/** db-lock's named mode: {@code GET_LOCK} on a pooled connection, compared with {@link #GET_LOCK}. */
	DB_LOCK_NAMED("db-lock NAMED", false, Set.of(1, 2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.NAMED, false)),

	/** The same, reading the fencing token while held. */
	DB_LOCK_NAMED_TOKEN("db-lock NAMED + token", false, Set.of(1, 2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.NAMED, true)),

	/** db-lock's transaction mode: a row lock in a {@code TransactionTemplate}'s transaction. */
	DB_LOCK_TRANSACTION("db-lock TRANSACTION", false, Set.of(1, 2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.TRANSACTION, false)),

	/** The same, reading the fencing token while held. */
	DB_LOCK_TRANSACTION_TOKEN("db-lock TRANSACTION + token", false, Set.of(1, 2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.TRANSACTION, true)),

	/** The same on key rows inserted before the run, as the hand-written contender's are (scenario 2 only). */
	DB_LOCK_TRANSACTION_ROWS_EXIST("db-lock TRANSACTION, rows exist", false, Set.of(2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.TRANSACTION, false, true)),

	/** The transaction mode's hand-written counterpart: SELECT ... FOR UPDATE on a row that exists. */
	SELECT_FOR_UPDATE("SELECT ... FOR UPDATE", false, Set.of(1, 2), SelectForUpdateContender::new),

	/** db-lock's read lock (a reader's row with its own lease), compared with the lease cycle, {@link #DB_LOCK}. */
	DB_LOCK_READ("db-lock READ", true, Set.of(1, 2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.READ, false)),

	/** db-lock's write lock (an intent and a writer's row), compared with the lease cycle. */
	DB_LOCK_WRITE("db-lock WRITE", true, Set.of(1, 2),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.WRITE, false)),

	/** db-lock's fair lock (a ticket in a queue), compared with the lease cycle; also on the hot key. */
	DB_LOCK_FAIR("db-lock FAIR", true, Set.of(1, 2, 3),
			(dataSource, prepare) -> new DbLockModeContender(dataSource, prepare, DbLockMode.FAIR, false));

	/** Whether the run is on PostgreSQL, where {@link #GET_LOCK} is labelled {@code pg_advisory_lock}. */
	private static volatile boolean postgresql;

	private final String label;

	private final boolean durable;

	/** The scenarios it runs in; empty for all. */
	private final Set<Integer> scenarios;

	private final Factory factory;

	ContenderKind(String label, boolean durable, Factory factory) {
		this(label, durable, Set.of(), factory);
	}

	ContenderKind(String label, boolean durable, Set<Integer> scenarios, Factory factory) {
		this.label = label;
		this.durable = durable;
		this.scenarios = scenarios;
		this.factory = factory;
	}

	/**
	 * What a lock mode of db-lock is compared with: its hand-written counterpart (the
	 * lease cycle for the read/write and fair modes).
	 * @return the counterpart, or {@code null} for the lease mode and the others
	 */
	public @Nullable ContenderKind counterpart() {
		return switch (this) {
			case DB_LOCK_NAMED, DB_LOCK_NAMED_TOKEN -> GET_LOCK;
			case DB_LOCK_TRANSACTION, DB_LOCK_TRANSACTION_TOKEN, DB_LOCK_TRANSACTION_ROWS_EXIST -> SELECT_FOR_UPDATE;
			case DB_LOCK_READ, DB_LOCK_WRITE, DB_LOCK_FAIR -> DB_LOCK;
			default -> null;
		};
	}

	/**
	 * Whether it runs in a scenario: the lock modes' comparisons run in scenarios 1 and 2
	 * only (the fair mode also on the hot key).
	 * @param scenario the scenario's number
	 * @return whether it runs there
	 */
	public boolean runsIn(int scenario) {
		return this.scenarios.isEmpty() || this.scenarios.contains(scenario);
	}

	/**
	 * The name shown in tables and charts.
	 * @return the label
	 */
	public String label() {
		return (this == GET_LOCK && postgresql) ? "pg_advisory_lock" : this.label;
	}

	/**
	 * Labels the contenders as they run on the run's database: on PostgreSQL,
	 * {@link #GET_LOCK} is {@code pg_advisory_lock}/{@code pg_advisory_unlock}.
	 * @param onPostgresql whether the run is on PostgreSQL
	 */
	public static void labelFor(boolean onPostgresql) {
		postgresql = onPostgresql;
	}

	/**
	 * Whether the lock survives the connection that took it.
	 * @return whether durable
	 */
	public boolean durable() {
		return this.durable;
	}

	/**
	 * Creates the contender over a data source.
	 * @param dataSource the pool it uses
	 * @param prepare whether to create its table if absent and delete what earlier runs
	 * left in it (the coordinating process does, the hot-key workers do not)
	 * @return the contender
	 */
	public LockContender create(DataSource dataSource, boolean prepare) {
		return this.factory.create(dataSource, prepare);
	}

	@FunctionalInterface
	private interface Factory {

		LockContender create(DataSource dataSource, boolean prepare);

	}

}
