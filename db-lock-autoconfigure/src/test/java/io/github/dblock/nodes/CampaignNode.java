package io.github.dblock.nodes;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.autoconfigure.DbLockCommitGuard;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.CommitGuard;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One application process of the fault campaign ({@link FaultCampaign}): worker threads
 * that take keys in the lease, fair, read, write and semaphore modes, write a register under
 * the exclusive ones in guarded transactions, and stand for leader, on one pool shared with
 * the lock (as an application's), while its test cuts its network, pauses it, kills the
 * database, shifts its clock, stalls the lock statements and exhausts its pool. Writes its
 * history (times are the database's, in microseconds, or {@code -1} when it could not be
 * read; {@code nanos} are {@link System#nanoTime()}):
 * <ul>
 * <li>{@code H,node,thread,hold,mode,key,permitKey,token,acquired,end,valid,lost}: a hold;
 * {@code acquired} read after the acquisition returned, {@code end} read before
 * {@code isHeld()} said {@code valid} (when it cannot be read, a lower bound: the last time
 * read plus the monotonic time since), then it was closed; {@code lost} whether
 * {@code lostSince()} was set after the close.</li>
 * <li>{@code W,node,thread,hold,seq,outcome}: a register write of a hold, its row carrying
 * {@code (node, thread, seq)}; {@code ok} (committed), {@code refused} (the commit guard's
 * {@link LockLostException}), {@code aborted} (failed before the commit: not committed) or
 * {@code unknown} (the commit failed otherwise).</li>
 * <li>{@code A,node,thread,mode,key,waitMillis,startNanos,elapsedNanos,outcome}: an
 * acquisition and how it ended ({@code ok}, {@code timeout}, {@code refused} for a try, or
 * the exception's class).</li>
 * <li>{@code L,node,term,micros}: the leader sampler saw this process lead in {@code term}
 * before and after reading the database's time (or its lower bound, as for a hold's end).</li>
 * <li>{@code P,node,startNanos,endNanos}: the process did not run for that long (paused).</li>
 * <li>{@code S,node}: the process runs under libfaketime (its clocks shifted and fast).</li>
 * </ul>
 * Prints {@code done=true} and counts at the end.
 */
public final class CampaignNode {

	/** The register table: a value and the token of its last writer per key. */
	static final String REGISTER_TABLE = "db_lock_test_campaign_register";

	/** One row per committed register write. */
	static final String WRITES_TABLE = "db_lock_test_campaign_writes";

	/** The keys of each mode, and the semaphore's permits. */
	static final List<String> LEASE_KEYS = List.of("lease-0", "lease-1");

	static final List<String> FAIR_KEYS = List.of("fair-0", "fair-1");

	static final String RW_KEY = "rw-0";

	static final String SEMAPHORE_KEY = "sem-0";

	static final int PERMITS = 2;

	static final String ROLE = "campaign";

	/** The lease of renewed holds and of the leader. */
	static final Duration LEASE = Duration.ofSeconds(3);

	/** Every acquisition's wait. */
	static final Duration WAIT = Duration.ofSeconds(2);

	/** db-lock's statement timeout here. */
	static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(1);

	/** The pool's validation timeout, part of an acquisition's documented bound. */
	static final Duration VALIDATION_TIMEOUT = Duration.ofSeconds(1);

	private static final int WORKERS = 5;

	/** The last database time read and the {@code nanoTime} after its reply. */
	private static final AtomicReference<long[]> ANCHOR = new AtomicReference<>();

	private static final int POOL = 12;

	private CampaignNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, node number, start (epoch milliseconds), the
	 * file whose presence ends the run (its clock may be shifted), history file, the file
	 * whose presence exhausts the pool, seed
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		int node = Integer.parseInt(args[3]);
		long start = Long.parseLong(args[4]);
		Path stopFile = Path.of(args[5]);
		Path history = Path.of(args[6]);
		Path hogFile = Path.of(args[7]);
		long seed = Long.parseLong(args[8]);
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(args[0]);
		config.setUsername(args[1]);
		config.setPassword(args[2]);
		config.setMaximumPoolSize(POOL);
		config.setConnectionTimeout(1000);
		config.setValidationTimeout(VALIDATION_TIMEOUT.toMillis());
		try (HikariDataSource dataSource = new HikariDataSource(config);
				PrintWriter out = new PrintWriter(Files.newBufferedWriter(history, StandardCharsets.UTF_8))) {
			SqlDialect dialect = SqlDialects.detect(dataSource, TestDatabase.TABLE);
			JdbcLockRepository repository = new JdbcLockRepository(dataSource, dialect, STATEMENT_TIMEOUT);
			History log = new History(out, node);
			if (System.getenv("FAKETIME_TIMESTAMP_FILE") != null) {
				// its monotonic clock is libfaketime's: its waits are not measured in real time
				log.line("S");
			}
			Watch watch = new Watch(log);
			try (LockEngine engine = NodeSupport.engine(repository)) {
				DbLockTemplate template = new DbLockTemplate(engine, "", WAIT, LEASE);
				DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
				new DbLockCommitGuard(new CommitGuard(repository.connections()), dataSource,
						new DefaultListableBeanFactory())
					.addTo(transactions);
				JdbcTemplate jdbc = new JdbcTemplate(dataSource);
				jdbc.setQueryTimeout(3);
				DbLockLeaders leaders = new DbLockLeaders(template, engine, repository, List.of(ROLE), LEASE,
						Duration.ofMillis(500), (event) -> {
						}, Map::<String, List<SmartLifecycle>>of);
				NodeSupport.awaitStart(start);
				Stop end = new Stop(stopFile);
				List<Thread> side = new ArrayList<>();
				side.add(daemon("stop-watch", end::watch));
				side.add(daemon("pause-watch", () -> watch.run(end)));
				side.add(daemon("leader-sampler", () -> sampleLeader(leaders, jdbc, dialect, log, end)));
				side.add(daemon("pool-hog", () -> hog(dataSource, hogFile, end)));
				leaders.start();
				Worker[] workers = new Worker[WORKERS];
				side.add(daemon("stuck-watch", () -> watchStuck(workers, end)));
				// plain threads, joined without a limit: the run lasts as long as the test says
				List<Thread> running = new ArrayList<>();
				AtomicReference<Throwable> failure = new AtomicReference<>();
				for (int i = 0; i < WORKERS; i++) {
					int thread = i;
					running.add(daemon("worker-" + thread, () -> {
						try {
							Worker worker = new Worker(node, thread, template, jdbc, dialect,
									new TransactionTemplate(transactions), log, new Random(seed * 31 + node * 7L + thread));
							workers[thread] = worker;
							while (!end.stopped()) {
								worker.step();
							}
						}
						catch (Throwable ex) {
							failure.compareAndSet(null, ex);
						}
					}));
				}
				for (Thread thread : running) {
					thread.join();
				}
				if (failure.get() != null) {
					throw new IllegalStateException("a worker failed", failure.get());
				}
				for (Thread thread : side) {
					thread.join(TimeUnit.SECONDS.toMillis(30));
				}
				leaders.stop();
				System.out.println("clockShiftedMillis=" + (System.currentTimeMillis() - micros(jdbc, dialect) / 1000));
			}
			System.out.println("holds=" + log.holds.get());
		}
		System.out.println("done=true");
	}

	private static Thread daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
		return thread;
	}

	/**
	 * Prints the stack of a worker whose acquisition has lasted 2.5 s past its wait, once per
	 * acquisition: what a late return waited for, for the campaign's log.
	 */
	private static void watchStuck(Worker[] workers, Stop end) {
		long[] dumped = new long[workers.length];
		while (!end.stopped()) {
			for (int i = 0; i < workers.length; i++) {
				Worker worker = workers[i];
				long since = (worker != null) ? worker.acquiringSince : 0;
				if (since != 0 && since != dumped[i]
						&& System.nanoTime() - since > WAIT.toNanos() + TimeUnit.MILLISECONDS.toNanos(2500)) {
					dumped[i] = since;
					StringBuilder stack = new StringBuilder("stuck worker " + i + " since " + since + ":");
					for (StackTraceElement element : worker.runner.getStackTrace()) {
						stack.append("\n    at ").append(element);
					}
					System.out.println(stack);
				}
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
		}
	}

	/** Asks whether this process leads every 50 ms, and records the database's time between two yes. */
	private static void sampleLeader(DbLockLeaders leaders, JdbcTemplate jdbc, SqlDialect dialect, History log,
			Stop end) {
		while (!end.stopped()) {
			OptionalLong before = leaders.term(ROLE);
			if (before.isPresent()) {
				long micros = micros(jdbc, dialect);
				if (micros < 0) {
					// cut off or stalled: it still says it leads, and that is what is checked
					micros = lowerBoundMicros();
				}
				OptionalLong after = leaders.term(ROLE);
				if (micros > 0 && after.isPresent() && after.getAsLong() == before.getAsLong()) {
					log.line("L", before.getAsLong(), micros);
				}
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}
	}

	/** While the file exists, keeps every connection of the pool it can get in an open transaction. */
	private static void hog(HikariDataSource dataSource, Path hogFile, Stop end) {
		while (!end.stopped()) {
			if (Files.exists(hogFile)) {
				List<Connection> taken = new ArrayList<>();
				try {
					while (Files.exists(hogFile) && !end.stopped()) {
						if (taken.size() < POOL) {
							try {
								Connection connection = dataSource.getConnection();
								taken.add(connection);
								connection.setAutoCommit(false);
								connection.createStatement().execute("SELECT 1");
							}
							catch (Exception ex) {
								// the pool is empty or the database away: keep what was taken
							}
						}
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
					}
				}
				finally {
					System.out.println("hogged " + taken.size() + " of " + POOL + " connections");
					for (Connection connection : taken) {
						try {
							connection.rollback();
						}
						catch (Exception ex) {
							// broken: the pool drops it
						}
						try {
							connection.close();
						}
						catch (Exception ex) {
							// as above
						}
					}
				}
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}
	}

	/** The database's now in microseconds, or -1 if it cannot be read. */
	static long micros(JdbcTemplate jdbc, SqlDialect dialect) {
		try {
			long micros = NodeSupport.databaseMicros(jdbc, dialect);
			ANCHOR.accumulateAndGet(new long[] { micros, System.nanoTime() }, (a, b) -> (a == null || b[1] > a[1]) ? b : a);
			return micros;
		}
		catch (RuntimeException ex) {
			return -1;
		}
	}

	/**
	 * A lower bound of the database's now, in microseconds, when it cannot be read: the last
	 * time read plus the monotonic time since its reply (the database's clock ran at least
	 * that long: one machine, and a pause stops this process, not the database's clock); -1
	 * before any read, and in a process whose monotonic clock libfaketime shifts.
	 */
	static long lowerBoundMicros() {
		long[] anchor = ANCHOR.get();
		if (anchor == null || System.getenv("FAKETIME_TIMESTAMP_FILE") != null) {
			return -1;
		}
		return anchor[0] + TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - anchor[1]);
	}

	/** The history file, written by every thread. */
	private static final class History {

		private final PrintWriter out;

		private final int node;

		private final AtomicLong holds = new AtomicLong();

		History(PrintWriter out, int node) {
			this.out = out;
			this.node = node;
		}

		void line(String kind, Object... fields) {
			StringBuilder line = new StringBuilder(kind).append(',').append(this.node);
			for (Object field : fields) {
				line.append(',').append(field);
			}
			synchronized (this.out) {
				this.out.println(line);
			}
		}

	}

	/** The end of the run: the test's stop file, looked for every 50 ms. */
	private static final class Stop {

		private final Path file;

		private volatile boolean stopped;

		Stop(Path file) {
			this.file = file;
		}

		boolean stopped() {
			return this.stopped;
		}

		void watch() {
			while (!Files.exists(this.file)) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
			}
			this.stopped = true;
		}

	}

	/** Records the times this process did not run: a gap in a 20 ms park of more than 300 ms. */
	private static final class Watch {

		private final History log;

		Watch(History log) {
			this.log = log;
		}

		void run(Stop end) {
			long last = System.nanoTime();
			while (!end.stopped()) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
				long now = System.nanoTime();
				if (now - last > TimeUnit.MILLISECONDS.toNanos(300)) {
					this.log.line("P", last, now);
				}
				last = now;
			}
		}

	}

	/** One thread's random operations. */
	private static final class Worker {

		private final int node;

		private final int thread;

		private final DbLockTemplate template;

		private final JdbcTemplate jdbc;

		private final SqlDialect dialect;

		private final TransactionTemplate transaction;

		private final History log;

		private final Random random;

		private long holds;

		private long seq;

		/** When its current acquisition began ({@code nanoTime}), 0 between acquisitions. */
		private volatile long acquiringSince;

		private final Thread runner = Thread.currentThread();

		Worker(int node, int thread, DbLockTemplate template, JdbcTemplate jdbc, SqlDialect dialect,
				TransactionTemplate transaction, History log, Random random) {
			this.node = node;
			this.thread = thread;
			this.template = template;
			this.jdbc = jdbc;
			this.dialect = dialect;
			this.transaction = transaction;
			this.log = log;
			this.random = random;
		}

		void step() {
			int dice = this.random.nextInt(20);
			if (dice < 5) {
				String key = LEASE_KEYS.get(this.random.nextInt(LEASE_KEYS.size()));
				Duration lease = (this.random.nextInt(4) == 0) ? Duration.ofMillis(800 + this.random.nextInt(1200)) : null;
				hold(DbLockMode.LEASE, key, () -> this.template.acquire(key, WAIT, lease));
			}
			else if (dice < 7) {
				String key = LEASE_KEYS.get(this.random.nextInt(LEASE_KEYS.size()));
				hold(DbLockMode.LEASE, key, () -> this.template.tryAcquire(key, null).orElse(null));
			}
			else if (dice < 11) {
				String key = FAIR_KEYS.get(this.random.nextInt(FAIR_KEYS.size()));
				hold(DbLockMode.FAIR, key, () -> this.template.acquire(DbLockMode.FAIR, key, WAIT));
			}
			else if (dice < 14) {
				hold(DbLockMode.WRITE, RW_KEY, () -> this.template.acquire(DbLockMode.WRITE, RW_KEY, WAIT));
			}
			else if (dice < 16) {
				hold(DbLockMode.READ, RW_KEY, () -> this.template.acquire(DbLockMode.READ, RW_KEY, WAIT));
			}
			else {
				hold(DbLockMode.SEMAPHORE, SEMAPHORE_KEY,
						() -> this.template.acquirePermit(SEMAPHORE_KEY, PERMITS, WAIT));
			}
		}

		private void hold(DbLockMode mode, String key, Supplier<LockHandle> acquisition) {
			long started = System.nanoTime();
			LockHandle handle;
			this.acquiringSince = started;
			try {
				handle = acquisition.get();
			}
			catch (RuntimeException ex) {
				this.acquiringSince = 0;
				long elapsed = System.nanoTime() - started;
				this.log.line("A", this.thread, mode, key, WAIT.toMillis(), started, elapsed,
						ex.getClass().getSimpleName());
				if (elapsed > WAIT.toNanos() + TimeUnit.SECONDS.toNanos(2)) {
					// what made it slow, for the campaign's log
					System.out.println("slow " + mode + " " + key + " started " + started + " took "
							+ TimeUnit.NANOSECONDS.toMillis(elapsed) + " ms: " + causes(ex));
				}
				pause(this.random.nextInt(50));
				return;
			}
			this.acquiringSince = 0;
			this.log.line("A", this.thread, mode, key, WAIT.toMillis(), started, System.nanoTime() - started,
					(handle != null) ? "ok" : "refused");
			if (handle == null) {
				return;
			}
			long hold = ++this.holds;
			long acquired = micros(this.jdbc, this.dialect);
			boolean exclusive = mode != DbLockMode.READ && mode != DbLockMode.SEMAPHORE;
			int work = this.random.nextInt(10);
			try {
				if (exclusive) {
					for (int i = 1 + this.random.nextInt(2); i > 0; i--) {
						write(handle, key, hold);
						pause(this.random.nextInt(30));
					}
				}
				// now and then longer than the renewed lease, or than a fixed one
				pause((work == 0) ? 1000 + this.random.nextInt(3000) : this.random.nextInt(100));
				if (exclusive && work < 3) {
					write(handle, key, hold);
				}
			}
			finally {
				long end = micros(this.jdbc, this.dialect);
				// cut off or stalled: what it says is checked at the least time the database's clock can show
				long endBound = (end < 0) ? lowerBoundMicros() : end;
				boolean valid = handle.isHeld();
				try {
					handle.close();
				}
				catch (RuntimeException ex) {
					// a release that failed: the lease ends on its own
				}
				this.log.line("H", this.thread, hold, mode, key, handle.key(), handle.fencingToken(), acquired, endBound,
						valid, handle.lostSince().isPresent());
				this.log.holds.incrementAndGet();
			}
		}

		/** One guarded read-modify-write of the key's register. */
		private void write(LockHandle handle, String key, long hold) {
			long seq = ++this.seq;
			boolean[] bodyDone = { false };
			String outcome;
			try {
				this.transaction.executeWithoutResult((status) -> {
					Map<String, Object> row = this.jdbc.queryForMap(
							"SELECT reg_value, reg_token FROM " + REGISTER_TABLE + " WHERE reg_key = ? FOR UPDATE", key);
					long value = ((Number) row.get("reg_value")).longValue();
					long at = NodeSupport.databaseMicros(this.jdbc, this.dialect);
					this.jdbc.update("UPDATE " + REGISTER_TABLE + " SET reg_value = ?, reg_token = ? WHERE reg_key = ?",
							value + 1, handle.fencingToken(), key);
					this.jdbc.update("INSERT INTO " + WRITES_TABLE
							+ " (reg_key, node, thread, seq, hold, token, read_value, read_token, at_micros)"
							+ " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", key, this.node, this.thread, seq, hold,
							handle.fencingToken(), value, ((Number) row.get("reg_token")).longValue(), at);
					bodyDone[0] = true;
				});
				outcome = "ok";
			}
			catch (LockLostException ex) {
				outcome = bodyDone[0] ? "refused" : "aborted";
			}
			catch (RuntimeException ex) {
				outcome = bodyDone[0] ? "unknown" : "aborted";
			}
			this.log.line("W", this.thread, hold, seq, outcome);
		}

		private static void pause(long millis) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
		}

		private static String causes(Throwable failure) {
			StringBuilder causes = new StringBuilder();
			for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
				causes.append(cause).append(" | ");
			}
			return causes.toString().replace('\n', ' ');
		}

	}

}
