package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.github.dblock.LostLeasePolicy;
import io.github.dblock.jdbc.dialect.Database;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * Configuration properties of db-lock.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("db-lock")
public class DbLockProperties {

	/**
	 * The longest statement timeout db-lock chooses when {@code db-lock.statement-timeout}
	 * is not set.
	 */
	static final Duration MAX_DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(2);

	/**
	 * Whether to enable db-lock.
	 */
	private boolean enabled = true;

	/**
	 * Name of the lock table: letters, digits and underscores.
	 */
	private String tableName = "db_lock";

	/**
	 * Prefix of every stored lock key, separated from the rest by a colon, so that
	 * applications sharing a database keep apart. Empty for none.
	 */
	private String keyPrefix = "";

	/**
	 * How long to wait for a held lock when @DbLock or DbLockTemplate does not say.
	 */
	private Duration defaultWait = Duration.ofSeconds(3);

	/**
	 * Lease of a lock when @DbLock or DbLockTemplate does not say: after it, the lock
	 * expires and another owner may take it.
	 */
	private Duration defaultLease = Duration.ofSeconds(30);

	/**
	 * Order of the @DbLock advice among the advisors of a bean. The default runs it just
	 * outside @Transactional (whose order is Ordered.LOWEST_PRECEDENCE), so that the lock
	 * is released after the commit.
	 */
	private int order = Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * Order of the advisor behind @DbLock(mode = TRANSACTION), which must run inside
	 * @Transactional: by default the lowest precedence, the transaction advisor's own, and
	 * registered after it. Start-up fails if a bean's advisors end up the other way.
	 */
	private int transactionModeOrder = Ordered.LOWEST_PRECEDENCE;

	/**
	 * SQL dialect. Detected from the connection's metadata when not set.
	 */
	private @Nullable Database dialect;

	/**
	 * What a @DbLock method or DbLockTemplate.execute does when it returns and its lease
	 * was lost while it ran: throw a LockLostException, log, or (rollback) also make a
	 * transaction that began while the lock was held roll back instead of commit when the
	 * lock is no longer held at commit.
	 */
	private LostLeasePolicy onLostLease = LostLeasePolicy.THROW;

	/**
	 * Whether a transaction on the lock table's data source that commits while its thread
	 * holds leases (lease, read, write and fair holds) first checks, on its own connection,
	 * that each lock's row is still its holder's and its lease not ended by the database's
	 * clock, locking the row until the commit is done; if not, the commit fails with a
	 * LockLostException and the transaction rolls back.
	 */
	private boolean guardCommits = true;

	/**
	 * Longest time this application passes a held lock from one of its threads to the
	 * next while another instance waits for it; then the lock goes to the other instance.
	 */
	private Duration localTurn = Duration.ofMillis(200);

	/**
	 * Longest time one lock statement may take, from sending it to its reply (the
	 * connection's network timeout, restored after, and but on PostgreSQL and for a named
	 * lock's statements a JDBC query timeout in whole seconds rounded up, never 0). A stalled database then fails a caller within its wait plus this, and
	 * a renewal in time to try again before its lease ends. It must be shorter than the
	 * renewal margin of the default lease (the lease minus the renewal interval: two thirds
	 * of it by default). When not set, half that margin, in whole milliseconds and at most
	 * 2s: a third of the default lease unless the watchdog interval is set (1s gives 333ms,
	 * 6s or longer gives 2s).
	 */
	private @Nullable Duration statementTimeout;

	/**
	 * Bean name of the DataSource that holds the lock table, for applications with several;
	 * unset to use the only or primary one. Every instance of the application must use the
	 * same database.
	 */
	private @Nullable String dataSource;

	private final Schema schema = new Schema();

	private final Backoff backoff = new Backoff();

	private final Watchdog watchdog = new Watchdog();

	private final Reaper reaper = new Reaper();

	private final History history = new History();

	private final Recovery recovery = new Recovery();

	private final Shutdown shutdown = new Shutdown();

	private final Pool pool = new Pool();

	private final WakeUps wakeUps = new WakeUps();


	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getDefaultWait() {
		return this.defaultWait;
	}

	public void setDefaultWait(Duration defaultWait) {
		this.defaultWait = defaultWait;
	}

	public Duration getDefaultLease() {
		return this.defaultLease;
	}

	public void setDefaultLease(Duration defaultLease) {
		this.defaultLease = defaultLease;
	}

	public int getOrder() {
		return this.order;
	}

	public void setOrder(int order) {
		this.order = order;
	}

	public int getTransactionModeOrder() {
		return this.transactionModeOrder;
	}

	public void setTransactionModeOrder(int transactionModeOrder) {
		this.transactionModeOrder = transactionModeOrder;
	}

	public @Nullable Database getDialect() {
		return this.dialect;
	}

	public void setDialect(@Nullable Database dialect) {
		this.dialect = dialect;
	}

	public boolean isGuardCommits() {
		return this.guardCommits;
	}

	public void setGuardCommits(boolean guardCommits) {
		this.guardCommits = guardCommits;
	}

	public LostLeasePolicy getOnLostLease() {
		return this.onLostLease;
	}

	public void setOnLostLease(LostLeasePolicy onLostLease) {
		this.onLostLease = onLostLease;
	}

	public Watchdog getWatchdog() {
		return this.watchdog;
	}


	public Reaper getReaper() {
		return this.reaper;
	}

	public History getHistory() {
		return this.history;
	}

	public Recovery getRecovery() {
		return this.recovery;
	}

	public Pool getPool() {
		return this.pool;
	}

	public Shutdown getShutdown() {
		return this.shutdown;
	}

	public Duration getLocalTurn() {
		return this.localTurn;
	}

	public void setLocalTurn(Duration localTurn) {
		this.localTurn = localTurn;
	}

	public @Nullable String getDataSource() {
		return this.dataSource;
	}

	public void setDataSource(@Nullable String dataSource) {
		this.dataSource = dataSource;
	}

	public @Nullable Duration getStatementTimeout() {
		return this.statementTimeout;
	}

	public void setStatementTimeout(@Nullable Duration statementTimeout) {
		this.statementTimeout = statementTimeout;
	}

	/**
	 * The statement timeout db-lock uses: {@link #getStatementTimeout()} if set, else half
	 * the {@link #renewalMargin() renewal margin} in whole milliseconds, at most
	 * {@link #MAX_DEFAULT_STATEMENT_TIMEOUT}. Shorter than the margin whenever the margin is
	 * at least 2ms.
	 * @return the statement timeout
	 */
	Duration statementTimeout() {
		if (this.statementTimeout != null) {
			return this.statementTimeout;
		}
		Duration half = renewalMargin().dividedBy(2).truncatedTo(ChronoUnit.MILLIS);
		return (half.compareTo(MAX_DEFAULT_STATEMENT_TIMEOUT) < 0) ? half : MAX_DEFAULT_STATEMENT_TIMEOUT;
	}

	/**
	 * The time a renewal of the default lease has between its start and the lease's end:
	 * the default lease minus the watchdog interval, or two thirds of the lease when no
	 * interval is set.
	 * @return the margin, not positive where the interval is not shorter than the lease
	 */
	Duration renewalMargin() {
		Duration interval = this.watchdog.getInterval();
		return this.defaultLease.minus((interval != null) ? interval : this.defaultLease.dividedBy(3));
	}

	public Schema getSchema() {
		return this.schema;
	}

	public Backoff getBackoff() {
		return this.backoff;
	}

	public WakeUps getWakeUps() {
		return this.wakeUps;
	}

	/**
	 * Schema properties.
	 */
	public static class Schema {

		/**
		 * Whether to create and upgrade the lock table with db-lock's own Flyway
		 * migrations, recorded in their own history table ("<table-name>_schema_history").
		 */
		private boolean migrate = true;

		public boolean isMigrate() {
			return this.migrate;
		}

		public void setMigrate(boolean migrate) {
			this.migrate = migrate;
		}

	}

	/**
	 * Renewal of leases that are not given a fixed length.
	 */
	public static class Watchdog {

		/**
		 * How often a held lease is renewed; shorter than the default lease. A third of the
		 * lease when not set.
		 */
		private @Nullable Duration interval;

		public @Nullable Duration getInterval() {
			return this.interval;
		}

		public void setInterval(@Nullable Duration interval) {
			this.interval = interval;
		}

	}

	/**
	 * The lock log: one row per hold in the table {@code <table-name>_history}, written off
	 * the callers' path.
	 */
	public static class History {

		/**
		 * Whether to write the lock log: who held which key, in which mode, with which token,
		 * from when to when, and how it ended (released, expired, lost, recovered).
		 */
		private boolean enabled;

		/**
		 * How long the log keeps a row, counted from its hold's start; the recovery job
		 * deletes older rows.
		 */
		private Duration retention = Duration.ofDays(7);

		/**
		 * Time between two writes of the log's new rows (one batch each); the rows of a JVM
		 * that dies within it are lost.
		 */
		private Duration flushInterval = Duration.ofMillis(100);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getRetention() {
			return this.retention;
		}

		public void setRetention(Duration retention) {
			this.retention = retention;
		}

		public Duration getFlushInterval() {
			return this.flushInterval;
		}

		public void setFlushInterval(Duration flushInterval) {
			this.flushInterval = flushInterval;
		}

	}

	/**
	 * The recovery job, run by one node at a time: frees holds older than
	 * {@code max-hold} and keeps the lock log (closes the rows of holds that expired,
	 * deletes rows past the retention). It runs when either is asked for.
	 */
	public static class Recovery {

		/**
		 * The longest a lease or read/write hold may last: the recovery job frees older ones
		 * (their holders find their leases lost) and logs each at WARN. A lease passed among
		 * threads of one application counts from its current holder's start, recorded at
		 * most one renewal interval late. Unset: none is freed.
		 */
		private @Nullable Duration maxHold;

		/**
		 * Time between runs of the recovery job.
		 */
		private Duration interval = Duration.ofMinutes(1);

		public @Nullable Duration getMaxHold() {
			return this.maxHold;
		}

		public void setMaxHold(@Nullable Duration maxHold) {
			this.maxHold = maxHold;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

	}

	/**
	 * Deletion of expired rows from the lock table.
	 */
	public static class Reaper {

		/**
		 * Whether to delete expired rows on a schedule.
		 */
		private boolean enabled = true;

		/**
		 * Time between runs.
		 */
		private Duration interval = Duration.ofMinutes(1);

		/**
		 * Most rows one statement deletes; a run repeats it until fewer are left.
		 */
		private int batchSize = 1000;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

	}

	/**
	 * A small pool of db-lock's own for its statements, instead of the application's.
	 */
	public static class Pool {

		/**
		 * Connections of db-lock's own pool, copied from the application's Hikari pool; unset
		 * to share the application's pool. With it, lock statements never wait for
		 * connections that the application's transactions hold.
		 */
		private int size;

		/**
		 * The longest a lock statement waits for a connection of db-lock's own pool (less
		 * when its call's wait and statement timeout end sooner), and the longest the pool
		 * checks an idle connection before handing it out.
		 */
		private Duration connectionTimeout = Duration.ofSeconds(1);

		public int getSize() {
			return this.size;
		}

		public void setSize(int size) {
			this.size = size;
		}

		public Duration getConnectionTimeout() {
			return this.connectionTimeout;
		}

		public void setConnectionTimeout(Duration connectionTimeout) {
			this.connectionTimeout = connectionTimeout;
		}

	}

	/**
	 * What happens to locks when the application shuts down.
	 */
	public static class Shutdown {

		/**
		 * How long, once the application is shutting down, threads holding a lock may still
		 * finish and release it. Waiting threads and new acquisitions are refused at once;
		 * after this, locks still held are reported lost to their holders and their rows
		 * deleted, so that the application leaves nothing in the lock table.
		 */
		private Duration gracePeriod = Duration.ofSeconds(10);

		public Duration getGracePeriod() {
			return this.gracePeriod;
		}

		public void setGracePeriod(Duration gracePeriod) {
			this.gracePeriod = gracePeriod;
		}

	}

	/**
	 * Wake-ups of waiters by releases (PostgreSQL).
	 */
	public static class WakeUps {

		/**
		 * Whether, on PostgreSQL, a lease-mode or fair-mode waiter asks again as soon as
		 * another instance releases or cedes the key it waits for (fair: the ticket ahead of
		 * it leaves the queue), told by the database (LISTEN/NOTIFY on a
		 * connection held while this instance's waiters were refused in the last minute; one
		 * more connection in db-lock's own pool), instead of at the end of its back-off. Off,
		 * or on other databases, waiters poll with the back-off alone.
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/**
	 * Back-off between attempts to take a held lock.
	 */
	public static class Backoff {

		/**
		 * Upper bound of the first pause; each later pause may double, up to the maximum.
		 */
		private Duration initial = Duration.ofMillis(5);

		/**
		 * Upper bound of every pause. Where waiters are not woken by a release (MySQL,
		 * MariaDB; on PostgreSQL they are), it bounds how soon another JVM finds a hot key
		 * this JVM gave up at the end of a local turn: lower it (e.g. 10ms) for faster
		 * hand-offs between JVMs at more statements a second while waiting.
		 */
		private Duration max = Duration.ofMillis(100);

		public Duration getInitial() {
			return this.initial;
		}

		public void setInitial(Duration initial) {
			this.initial = initial;
		}

		public Duration getMax() {
			return this.max;
		}

		public void setMax(Duration max) {
			this.max = max;
		}

	}

}
