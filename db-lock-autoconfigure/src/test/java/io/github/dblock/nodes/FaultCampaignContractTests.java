package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.NetworkNamespaces;
import io.github.dblock.testsupport.OwnServer;
import io.github.dblock.testsupport.TestDatabase;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The fault campaign: three application processes ({@link CampaignNode}), each in a
 * network namespace of its own, use every lock mode and the leader election on a database
 * server the test starts, while a seeded random schedule injects faults, each kind at least
 * twice, every 0.5 to 3 s for 0.5 to 6.5 s (the lease is 3 s), so that they overlap, one at a
 * time on each target (a node; the database for kills and stalls): partitions from the
 * database in one direction or both, shorter and longer than the lease ({@code nft} drops in
 * the namespace); {@code SIGSTOP} past the lease; the database killed with {@code kill -9}
 * and restarted; a node's clock jumped ahead (libfaketime, the monotonic clock with it, 2%
 * fast throughout); every lock statement stalled by a test trigger that sleeps past the
 * statement timeout; a node's pool exhausted by its own transactions. Then the faults stop,
 * the nodes end, and one checker ({@link CampaignChecker}) reads the whole history: every
 * violation count must be 0.
 * <p>
 * {@code -Dcampaign.minutes=N} runs the faults for {@code N} minutes (default 1.5 on one
 * server, 1 on a cluster), {@code -Dcampaign.seed=S} replays a schedule; both are printed,
 * and each node's history and output is kept under {@code target/campaign-*}.
 */
abstract class FaultCampaignContractTests {

	/** The kinds of fault. */
	enum Fault {

		CUT_BOTH, CUT_TO_DATABASE, CUT_FROM_DATABASE, PAUSE, KILL_DATABASE, CLOCK_JUMP, STALL, EXHAUST_POOL

	}

	private static final int NODES = 3;

	/** The node whose clock libfaketime shifts. */
	private static final int SHIFTED = 2;

	/** The nodes run this long after the faults, so that every node is healthy at its end. */
	private static final long QUIET_TAIL_MILLIS = 15_000;

	/** The JVMs' start-up before the common start (the shifted one is slower). */
	private static final long START_MARGIN_MILLIS = 15_000;

	/** Each statement's sleep in the stall trigger: past the statement timeout. */
	static final int STALL_SECONDS = 2;

	@TempDir
	Path dir;

	/** How long the faults last unless {@code -Dcampaign.minutes} says. */
	protected double defaultMinutes() {
		return 1.5;
	}

	/** Starts the database server, listening on the namespaces' host addresses too. */
	protected abstract OwnServer startServer(NetworkNamespaces namespaces) throws Exception;

	/** The URL a node in namespace {@code n} uses, with its driver's timeouts. */
	protected abstract String nodeUrl(OwnServer server, NetworkNamespaces namespaces, int n);

	/** The statements that create the stall trigger on the lock table, reading {@code stall_seconds}. */
	protected abstract List<String> stallTrigger(String table);

	@Test
	void noViolationUnderMixedFaults() throws Exception {
		String faketime = NodeSupport.libfaketime();
		Assumptions.assumeTrue(faketime != null, "libfaketime is not installed (apt-get install faketime)");
		double minutes = Double.parseDouble(System.getProperty("campaign.minutes", String.valueOf(defaultMinutes())));
		long seed = Long.getLong("campaign.seed", System.nanoTime());
		String label = getClass().getSimpleName();
		System.out.println(label + ": fault campaign, seed " + seed + " (-Dcampaign.seed=" + seed + " replays it), "
				+ minutes + " minute(s) of faults");
		Random random = new Random(seed);
		try (NetworkNamespaces namespaces = NetworkNamespaces.create(NODES);
				OwnServer server = startServer(namespaces)) {
			TestDatabase.Connection local = new TestDatabase.Connection(server.url(), server.user(), "", false);
			try (HikariDataSource dataSource = NodeSupport.dataSource(server.url(), server.user(), "", 2)) {
				prepare(dataSource);
			}
			long faultMillis = (long) (minutes * 60_000);
			long start = System.currentTimeMillis() + START_MARGIN_MILLIS;
			// the nodes run until this file appears, whatever their clocks say
			Path stop = this.dir.resolve("stop");
			Path clock = this.dir.resolve("faketime");
			// 2% fast, and jumped ahead now and then
			Files.writeString(clock, "+0 x1.02\n");
			List<NodeSupport.Node> nodes = new ArrayList<>();
			List<Path> histories = new ArrayList<>();
			Map<Fault, Integer> injected = new EnumMap<>(Fault.class);
			Faults faults = new Faults(namespaces, server, nodes, clock);
			List<String> outputs = new ArrayList<>();
			try {
				for (int n = 0; n < NODES; n++) {
					Map<String, String> environment = (n != SHIFTED) ? Map.of()
							: Map.of("LD_PRELOAD", faketime, "FAKETIME_TIMESTAMP_FILE", clock.toString(),
									"FAKETIME_CACHE_DURATION", "1", "JAVA_TOOL_OPTIONS", NodeSupport.FAKETIME_JVM_OPTIONS);
					histories.add(this.dir.resolve("history-" + n + ".csv"));
					nodes.add(NodeSupport.start(namespaces.prefix(n), CampaignNode.class,
							new TestDatabase.Connection(nodeUrl(server, namespaces, n), server.user(), "", false),
							environment, n, start, stop, histories.get(n), this.dir.resolve("hog-" + n), seed));
				}
				NodeSupport.awaitStart(start + 2000);
				List<Fault> schedule = schedule(random, faultMillis);
				long faultsEnd = start + faultMillis;
				List<Thread> running = new ArrayList<>();
				for (Fault fault : schedule) {
					if (System.currentTimeMillis() > faultsEnd) {
						break;
					}
					// the next one starts while this one may last: faults overlap, on different targets
					int node = (fault == Fault.CLOCK_JUMP) ? SHIFTED : random.nextInt(NODES);
					long millis = 500 + random.nextInt((int) (2 * CampaignNode.LEASE.toMillis()));
					long offset = 5 + random.nextInt(60);
					running.add(faults.start(fault, node, millis, offset, local));
					injected.merge(fault, 1, Integer::sum);
					pause(500 + random.nextInt(2500));
				}
				for (Thread thread : running) {
					thread.join();
				}
				faults.rethrow();
				faults.healAll(local);
				pause(QUIET_TAIL_MILLIS);
				Files.writeString(stop, "stop");
				for (NodeSupport.Node node : nodes) {
					outputs.add(NodeSupport.finish(node));
				}
			}
			finally {
				faults.healAll(local);
				for (NodeSupport.Node node : nodes) {
					node.process().destroyForcibly();
				}
			}
			for (int n = 0; n < NODES; n++) {
				Files.writeString(Path.of("target", "campaign-" + label + "-node-" + n + ".log"), outputs.get(n));
				Files.copy(histories.get(n), Path.of("target", "campaign-" + label + "-history-" + n + ".csv"),
						StandardCopyOption.REPLACE_EXISTING);
			}
			CampaignChecker checker;
			try (HikariDataSource dataSource = NodeSupport.dataSource(server.url(), server.user(), "", 2)) {
				checker = check(dataSource, histories);
			}
			System.out.println(label + ": faults injected " + injected + ", packets dropped " + faults.dropped);
			System.out.println(label + ": counts " + checker.counts());
			System.out.println(label + ": longest return past the bound " + checker.longestPastBoundMillis() + " ms");
			System.out.println(label + ": violations " + checker.violations());
			checker.findings().forEach((finding) -> System.out.println(label + ": " + finding));
			SoftAssertions.assertSoftly((softly) -> {
				for (Fault fault : Fault.values()) {
					softly.assertThat(injected.getOrDefault(fault, 0)).as("times %s was injected", fault)
						.isGreaterThanOrEqualTo(2);
				}
				for (Fault cut : List.of(Fault.CUT_BOTH, Fault.CUT_TO_DATABASE, Fault.CUT_FROM_DATABASE)) {
					// a node's traffic did meet its cuts
					softly.assertThat(faults.dropped.getOrDefault(cut, 0L)).as("packets dropped by %s", cut).isPositive();
				}
				// its clock was ahead of the database's at the end by the jumps, at least 5 s each
				String shifted = NodeSupport.values(outputs.get(SHIFTED)).getOrDefault("clockShiftedMillis", "0");
				softly.assertThat(Long.parseLong(shifted))
					.as("the shifted node's clock ahead of the database's (ms)")
					.isGreaterThan(5000);
				softly.assertThat(checker.counts().getOrDefault("holds checked", 0L)).as("holds checked")
					.isGreaterThan(100);
				softly.assertThat(checker.counts().getOrDefault("leader terms", 0L)).as("leader terms").isPositive();
				checker.violations()
					.forEach((kind, found) -> softly.assertThat(found).as("%s (seed %d)", kind, seed).isZero());
			});
		}
	}

	/**
	 * Each kind twice, in a shuffled order, then random kinds for the rest of the time: every
	 * kind comes twice within the first 16 faults, some 30 s.
	 */
	private static List<Fault> schedule(Random random, long faultMillis) {
		List<Fault> schedule = new ArrayList<>();
		for (Fault fault : Fault.values()) {
			schedule.add(fault);
			schedule.add(fault);
		}
		Collections.shuffle(schedule, random);
		// one starts every 1.75 s on average
		while (schedule.size() * 1750L < faultMillis) {
			schedule.add(Fault.values()[random.nextInt(Fault.values().length)]);
		}
		return schedule;
	}

	private void prepare(HikariDataSource dataSource) {
		SqlDialect dialect = SqlDialects.detect(dataSource, TestDatabase.TABLE);
		new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute("CREATE TABLE " + CampaignNode.REGISTER_TABLE
				+ " (reg_key VARCHAR(64) PRIMARY KEY, reg_value BIGINT NOT NULL, reg_token BIGINT NOT NULL)");
		jdbc.execute("CREATE TABLE " + CampaignNode.WRITES_TABLE + " (reg_key VARCHAR(64) NOT NULL, node INT NOT NULL,"
				+ " thread INT NOT NULL, seq BIGINT NOT NULL, hold BIGINT NOT NULL, token BIGINT NOT NULL,"
				+ " read_value BIGINT NOT NULL, read_token BIGINT NOT NULL, at_micros BIGINT NOT NULL,"
				+ " PRIMARY KEY (node, thread, seq))");
		List<String> keys = new ArrayList<>(CampaignNode.LEASE_KEYS);
		keys.addAll(CampaignNode.FAIR_KEYS);
		keys.add(CampaignNode.RW_KEY);
		for (String key : keys) {
			jdbc.update("INSERT INTO " + CampaignNode.REGISTER_TABLE + " (reg_key, reg_value, reg_token) VALUES (?, 0, 0)",
					key);
		}
		jdbc.execute("CREATE TABLE db_lock_test_campaign_stall (id INT PRIMARY KEY, stall_seconds INT NOT NULL)");
		jdbc.update("INSERT INTO db_lock_test_campaign_stall (id, stall_seconds) VALUES (1, 0)");
		stallTrigger(TestDatabase.TABLE).forEach(jdbc::execute);
	}

	private CampaignChecker check(HikariDataSource dataSource, List<Path> histories) throws Exception {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		List<CampaignChecker.Written> written = jdbc.query("SELECT reg_key, node, thread, seq, hold, token, read_value,"
				+ " read_token, at_micros FROM " + CampaignNode.WRITES_TABLE,
				(rs, row) -> new CampaignChecker.Written(rs.getString(1), rs.getInt(2), rs.getInt(3), rs.getLong(4),
						rs.getLong(5), rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getLong(9)));
		Map<String, Long> registers = new HashMap<>();
		jdbc.query("SELECT reg_key, reg_value FROM " + CampaignNode.REGISTER_TABLE,
				(rs) -> {
					registers.put(rs.getString(1), rs.getLong(2));
				});
		SqlDialect dialect = SqlDialects.detect(dataSource, TestDatabase.TABLE);
		long rowsLeft = 0;
		for (String table : List.of(TestDatabase.TABLE, TestDatabase.TABLE + "_rw", TestDatabase.TABLE + "_rw_intents",
				TestDatabase.TABLE + "_fair_queue")) {
			rowsLeft += jdbc.queryForObject(
					"SELECT COUNT(*) FROM " + table + " WHERE expires_at > " + dialect.now(), Long.class);
		}
		return new CampaignChecker().check(histories, written, registers, rowsLeft);
	}

	private static void pause(long millis) {
		LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
	}

	/** Injects one fault at a time and heals it. */
	private static final class Faults {

		private final NetworkNamespaces namespaces;

		private final OwnServer server;

		private final List<NodeSupport.Node> nodes;

		private final Path clock;

		private long clockOffsetSeconds;

		/** The packets the cuts of each kind dropped. */
		private final Map<Fault, Long> dropped = new ConcurrentHashMap<>();

		private final AtomicReference<Throwable> failure = new AtomicReference<>();

		Faults(NetworkNamespaces namespaces, OwnServer server, List<NodeSupport.Node> nodes, Path clock) {
			this.namespaces = namespaces;
			this.server = server;
			this.nodes = nodes;
			this.clock = clock;
		}

		/**
		 * Starts a thread that waits until the fault's target is free (the node, or the
		 * database for a kill or a stall), applies the fault, keeps it for {@code millis}
		 * (shorter or longer than the lease) and heals it.
		 */
		Thread start(Fault fault, int node, long millis, long clockStepSeconds, TestDatabase.Connection local) {
			Object target = (fault == Fault.KILL_DATABASE || fault == Fault.STALL) ? this.server
					: this.nodes.get(node);
			Thread thread = new Thread(() -> {
				try {
					synchronized (target) {
						inject(fault, node, millis, clockStepSeconds, local);
					}
				}
				catch (Throwable ex) {
					this.failure.compareAndSet(null, ex);
				}
			}, "fault " + fault);
			thread.start();
			return thread;
		}

		/** Throws the first failure of an injection, if any. */
		void rethrow() throws Exception {
			Throwable failed = this.failure.get();
			if (failed != null) {
				throw new IllegalStateException("a fault could not be injected or healed", failed);
			}
		}

		private void inject(Fault fault, int node, long millis, long clockStepSeconds, TestDatabase.Connection local)
				throws Exception {
			// the wall clock in microseconds, as the histories' times (the database runs on this machine)
			System.out.printf(Locale.ROOT, "campaign: %s node %d for %d ms from %d (%d µs)%n", fault, node, millis,
					System.nanoTime(), wallMicros());
			switch (fault) {
				case CUT_BOTH, CUT_TO_DATABASE, CUT_FROM_DATABASE -> {
					this.namespaces.cut(node, switch (fault) {
						case CUT_BOTH -> NetworkNamespaces.Cut.BOTH;
						case CUT_TO_DATABASE -> NetworkNamespaces.Cut.TO_SERVER;
						default -> NetworkNamespaces.Cut.FROM_SERVER;
					});
					pause(millis);
					long dropped = this.namespaces.heal(node);
					this.dropped.merge(fault, dropped, Long::sum);
					System.out.printf(Locale.ROOT, "campaign: %s node %d dropped %d packets%n", fault, node, dropped);
				}
				case PAUSE -> {
					signal("STOP", node);
					pause(millis);
					signal("CONT", node);
				}
				case KILL_DATABASE -> {
					this.server.kill();
					pause(millis);
					this.server.restart();
					System.out.printf(Locale.ROOT, "campaign: database restarted (%d µs)%n", wallMicros());
				}
				case CLOCK_JUMP -> {
					// ahead only: the monotonic clock moves with it, and that one never goes back
					synchronized (this.clock) {
						this.clockOffsetSeconds += clockStepSeconds;
						Files.writeString(this.clock, "+" + this.clockOffsetSeconds + " x1.02\n");
					}
					pause(millis);
				}
				case STALL -> {
					setStall(local, STALL_SECONDS);
					try {
						pause(millis);
					}
					finally {
						setStall(local, 0);
					}
				}
				case EXHAUST_POOL -> {
					Path hog = hogFile(node);
					Files.writeString(hog, "hog");
					pause(millis);
					Files.deleteIfExists(hog);
				}
			}
		}

		/** Undoes whatever may still be in force, whatever failed. */
		void healAll(TestDatabase.Connection local) {
			for (int node = 0; node < this.nodes.size(); node++) {
				try {
					this.namespaces.heal(node);
					if (this.nodes.get(node).process().isAlive()) {
						signal("CONT", node);
					}
					Files.deleteIfExists(hogFile(node));
				}
				catch (Exception ex) {
					System.out.println("campaign: could not heal node " + node + ": " + ex);
				}
			}
			try {
				setStall(local, 0);
			}
			catch (RuntimeException ex) {
				System.out.println("campaign: could not end the stall: " + ex);
			}
		}

		private Path hogFile(int node) {
			return this.clock.resolveSibling("hog-" + node);
		}

		private void signal(String signal, int node) throws Exception {
			NodeSupport.Node target = this.nodes.get(node);
			Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(target.process().pid())).start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				if (!target.process().isAlive()) {
					// what the node printed says why it ended before the campaign stopped it
					String printed;
					try {
						printed = target.output().get(10, TimeUnit.SECONDS);
					}
					catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
						printed = "(its output could not be read: " + ex + ")";
					}
					throw new IllegalStateException("kill -" + signal + " of node " + node + " failed: it ended (exit "
							+ target.process().exitValue() + "), printing:\n"
							+ printed.substring(Math.max(0, printed.length() - 8000)));
				}
				throw new IllegalStateException("kill -" + signal + " of node " + node + " failed");
			}
		}

		private static long wallMicros() {
			java.time.Instant now = java.time.Instant.now();
			return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
		}

		private static void setStall(TestDatabase.Connection local, int seconds) {
			try (HikariDataSource dataSource = NodeSupport.dataSource(local.url(), local.user(), "", 1)) {
				new JdbcTemplate(dataSource).update("UPDATE db_lock_test_campaign_stall SET stall_seconds = ? WHERE id = 1",
						seconds);
			}
		}

	}

}
