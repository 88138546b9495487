package io.github.dblock.benchmarks.contender;

import javax.sql.DataSource;

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

	/** The database's session locks. */
	GET_LOCK("GET_LOCK", false, GetLockContender::new),

	/** The seed documents' INSERT/DELETE pattern. */
	RAW_INSERT_DELETE("INSERT/DELETE", true, (dataSource, prepare) -> new RawInsertDeleteContender(dataSource, prepare, false)),

	/** The same pattern on a row shaped like db-lock's (token and expiry indexes): what the row costs. */
	RAW_ON_LEASE_ROW("INSERT/DELETE, db-lock's row", true,
			(dataSource, prepare) -> new RawInsertDeleteContender(dataSource, prepare, true));

	private final String label;

	private final boolean durable;

	private final Factory factory;

	ContenderKind(String label, boolean durable, Factory factory) {
		this.label = label;
		this.durable = durable;
		this.factory = factory;
	}

	/**
	 * The name shown in tables and charts.
	 * @return the label
	 */
	public String label() {
		return this.label;
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
