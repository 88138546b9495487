package io.github.dblock.nodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read/write modes between nodes that are separate JVM processes on one database:
 * <ul>
 * <li>two processes of four threads each read and write one key (every third operation a
 * write, fenced by its token): readers are seen in together, no writer ever overlaps
 * anyone, and the fence refuses no write;</li>
 * <li>two processes of three threads each keep reading one key with no pause: a writer in
 * this JVM gets in within two lease periods (the claim of write preference across nodes),
 * overlapping no one;</li>
 * <li>a process that holds the key for reading is killed with SIGKILL: a writer waiting
 * here gets in once the dead reader's lease ends, within two lease periods of the kill,
 * with a higher token;</li>
 * <li>two processes of three threads each take one key, both for writing, or one for
 * reading and the other for writing, with a wait of 2 s and holds of 20 ms, for 10 s: each
 * process gets at least 30% of the holds (of the time held, where readers, who hold the key
 * together, are in one process) and none times out (no process starves the other), and no
 * writer overlaps anyone.</li>
 * </ul>
 */
abstract class ReadWriteProcessesContractTests {

	/** The readers' and writers' lease: the time the claims are measured in. */
	private static final Duration LEASE = Duration.ofSeconds(5);

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final long HOT_KEY_MILLIS = 10_000;

	private static final long HOT_KEY_HOLD_MILLIS = 20;

	private static final long HOT_KEY_WAIT_MILLIS = 2_000;

	protected abstract TestDatabase database();

	@Test
	void readersShareAndWritersOverlapNoOneAcrossProcesses() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = prepareTables(dataSource);
			int processes = 2;
			int threads = 4;
			int operations = 24;
			int mostReaders = 0;
			int writes = 0;
			for (Map<String, String> node : NodeSupport.run(processes, ReadWriteNode.class, database().connection(),
					(n) -> new Object[] { "mixed-" + n, "rw-mixed", threads, operations, 3, LEASE.toMillis(), 3 })) {
				assertThat(node.get("overlaps")).isEqualTo("0");
				assertThat(node.get("refused")).isEqualTo("0");
				mostReaders = Math.max(mostReaders, Integer.parseInt(node.get("mostReaders")));
				writes += Integer.parseInt(node.get("writes"));
			}
			System.out.println(database() + " read/write across " + processes + " processes: most readers in at once "
					+ mostReaders + ", " + writes + " writes");
			assertThat(mostReaders).as("readers seen in together").isGreaterThan(1);
			assertThat(jdbc.queryForObject("SELECT counter_value FROM " + ModeNodes.COUNTER_TABLE + " WHERE id = 1",
					Long.class)).isEqualTo(writes);
			assertThat(rows(jdbc)).isZero();
		}
	}

	@Test
	void aWriterGetsInUnderAStreamOfReadersFromTwoProcesses() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(4); LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = prepareTables(dataSource);
			DbLockTemplate template = new DbLockTemplate(engine, "", LONG_WAIT, LEASE);
			List<NodeSupport.Node> nodes = new ArrayList<>();
			try {
				for (int n = 0; n < 2; n++) {
					nodes.add(NodeSupport.start(ReadWriteNode.class, database().connection(), "stream-" + n, "rw-stream", 3,
							Integer.MAX_VALUE, 0, LEASE.toMillis(), 20));
				}
				for (int n = 0; n < 2; n++) {
					awaitSignal(jdbc, "streaming-stream-" + n, nodes.get(n));
				}
				// the stream runs a while before the writer asks
				Thread.sleep(1000);
				long start = System.nanoTime();
				long waited;
				boolean alone;
				try (LockHandle lock = template.acquire(DbLockMode.WRITE, "rw-stream", LONG_WAIT)) {
					waited = System.nanoTime() - start;
					alone = jdbc.queryForObject("SELECT readers FROM " + ReadWriteNode.HOLDERS_TABLE + " WHERE id = 1",
							Integer.class) == 0;
					assertThat(lock.isHeld()).isTrue();
				}
				jdbc.update("INSERT INTO " + ModeNodes.SIGNAL_TABLE + " (name, signal_value) VALUES (?, 1)",
						ReadWriteNode.STOP);
				int reads = 0;
				for (NodeSupport.Node node : nodes) {
					Map<String, String> values = NodeSupport.values(NodeSupport.finish(node));
					assertThat(values.get("overlaps")).isEqualTo("0");
					reads += Integer.parseInt(values.get("reads"));
				}
				System.out.println(database() + " writer under a stream of readers from 2 processes x 3 threads got in "
						+ "after " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms (" + reads + " reads in all; lease "
						+ LEASE.toMillis() + " ms)");
				assertThat(alone).as("a reader was in with the writer").isTrue();
				assertThat(Duration.ofNanos(waited)).as("the claim: within two lease periods")
					.isLessThan(LEASE.multipliedBy(2));
			}
			finally {
				for (NodeSupport.Node node : nodes) {
					node.process().destroyForcibly();
				}
			}
			assertThat(rows(jdbc)).isZero();
		}
	}

	@Test
	void aKilledReaderDoesNotBlockAWriterPastItsLease() throws Exception {
		String key = "rw-killed-reader";
		String signal = "holding-READ";
		try (HikariDataSource dataSource = database().dataSource(4); LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = prepareTables(dataSource);
			DbLockTemplate template = new DbLockTemplate(engine, "", LONG_WAIT, LEASE);
			// a reader that renews its lease of ModeHolderNode.LEASE until it is killed
			NodeSupport.Node holder = NodeSupport.start(ModeHolderNode.class, database().connection(), DbLockMode.READ,
					key, signal);
			ExecutorService waiterThread = Executors.newSingleThreadExecutor();
			try {
				awaitSignal(jdbc, signal, holder);
				long deadToken = jdbc.queryForObject(
						"SELECT signal_value FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = ?", Long.class, signal);
				assertThat(template.tryAcquire(DbLockMode.WRITE, key)).as("a writer got in with a live reader").isEmpty();
				// readers share it with the live one
				template.tryAcquire(DbLockMode.READ, key).orElseThrow().close();
				Future<long[]> waiter = waiterThread.submit(() -> {
					try (LockHandle lock = template.acquire(DbLockMode.WRITE, key, LONG_WAIT)) {
						return new long[] { System.nanoTime(), lock.fencingToken() };
					}
				});
				long killedAt = System.nanoTime();
				holder.process().destroyForcibly();
				long[] acquired = waiter.get(LONG_WAIT.toSeconds() + 30, TimeUnit.SECONDS);
				long takeover = acquired[0] - killedAt;
				System.out.println(database() + " takeover ms: " + TimeUnit.NANOSECONDS.toMillis(takeover)
						+ " (kill -9 of a reader with a lease of " + ModeHolderNode.LEASE.toMillis()
						+ " ms to a waiting writer's acquisition; dead reader's token " + deadToken + ", writer's "
						+ acquired[1] + ")");
				assertThat(Duration.ofNanos(takeover)).as("the claim: within two lease periods of the kill")
					.isLessThan(ModeHolderNode.LEASE.multipliedBy(2));
				assertThat(acquired[1]).isGreaterThan(deadToken);
			}
			finally {
				waiterThread.shutdownNow();
				holder.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
	}

	@Test
	void writersOfTwoProcessesShareAHotKeyAndNoneTimesOut() throws Exception {
		hotKey(DbLockMode.WRITE, DbLockMode.WRITE);
	}

	@Test
	void readersOfOneProcessAndWritersOfAnotherShareAHotKeyAndNoneTimesOut() throws Exception {
		hotKey(DbLockMode.READ, DbLockMode.WRITE);
	}

	/**
	 * Two node processes on one hot key for {@value #HOT_KEY_MILLIS} ms, each of three threads
	 * that take it in its mode with a wait of {@value #HOT_KEY_WAIT_MILLIS} ms and hold it
	 * {@value #HOT_KEY_HOLD_MILLIS} ms: each process gets at least 30% of the holds (of the
	 * time the key was held, when one process reads: its readers hold it together), no one
	 * times out, no writer overlaps anyone.
	 */
	private void hotKey(DbLockMode first, DbLockMode second) throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			prepareTables(dataSource);
			DbLockMode[] modes = { first, second };
			long start = System.currentTimeMillis() + SafetyChecker.START_MARGIN_MILLIS;
			List<Map<String, String>> nodes = NodeSupport.run(2, ReadWriteHotKeyNode.class, database().connection(),
					(n) -> new Object[] { modes[n], 3, start, HOT_KEY_MILLIS, HOT_KEY_HOLD_MILLIS, HOT_KEY_WAIT_MILLIS });
			long total = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("acquired"))).sum();
			long totalHeld = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("heldNanos"))).sum();
			System.out.printf("%s read/write hot key, %s x 3 threads, %d ms, holds of %d ms, wait %d ms: holds %s, "
					+ "shares %s, shares of the time held %s, timeouts %s, overlaps %s%n", database(), List.of(modes),
					HOT_KEY_MILLIS,
					HOT_KEY_HOLD_MILLIS, HOT_KEY_WAIT_MILLIS, nodes.stream().map((node) -> node.get("acquired")).toList(),
					nodes.stream()
						.map((node) -> String.format("%.1f%%",
								100.0 * Long.parseLong(node.get("acquired")) / Math.max(total, 1)))
						.toList(),
					nodes.stream()
						.map((node) -> String.format("%.1f%%",
								100.0 * Long.parseLong(node.get("heldNanos")) / Math.max(totalHeld, 1)))
						.toList(),
					nodes.stream().map((node) -> node.get("timeouts")).toList(),
					nodes.stream().map((node) -> node.get("overlaps")).toList());
			for (Map<String, String> node : nodes) {
				assertThat(node.get("overlaps")).isEqualTo("0");
				assertThat(node.get("timeouts")).isEqualTo("0");
				if (first == second) {
					assertThat(Long.parseLong(node.get("acquired"))).as("a process's share of " + total + " holds")
						.isGreaterThanOrEqualTo(total * 3 / 10);
				}
				else {
					assertThat(Long.parseLong(node.get("heldNanos"))).as("a process's share of " + totalHeld + " ns held")
						.isGreaterThanOrEqualTo(totalHeld * 3 / 10);
				}
			}
		}
	}

	private static JdbcTemplate prepareTables(HikariDataSource dataSource) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.COUNTER_TABLE
				+ " (id INT PRIMARY KEY, counter_value BIGINT NOT NULL, fence BIGINT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ReadWriteNode.HOLDERS_TABLE
				+ " (id INT PRIMARY KEY, readers INT NOT NULL, writers INT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.SIGNAL_TABLE
				+ " (name VARCHAR(100) PRIMARY KEY, signal_value BIGINT NOT NULL)");
		jdbc.update("DELETE FROM " + ModeNodes.COUNTER_TABLE);
		jdbc.update("INSERT INTO " + ModeNodes.COUNTER_TABLE + " (id, counter_value, fence) VALUES (1, 0, 0)");
		jdbc.update("DELETE FROM " + ReadWriteNode.HOLDERS_TABLE);
		jdbc.update("INSERT INTO " + ReadWriteNode.HOLDERS_TABLE + " (id, readers, writers) VALUES (1, 0, 0)");
		jdbc.update("DELETE FROM " + ModeNodes.SIGNAL_TABLE);
		jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw");
		jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw_intents");
		return jdbc;
	}

	private static int rows(JdbcTemplate jdbc) {
		return jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_rw", Integer.class)
				+ jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_rw_intents", Integer.class);
	}

	private static void awaitSignal(JdbcTemplate jdbc, String signal, NodeSupport.Node node) throws Exception {
		long deadline = System.nanoTime() + NodeSupport.SIGNAL_TIMEOUT.toNanos();
		while (jdbc.queryForList("SELECT signal_value FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = ?", Long.class,
				signal).isEmpty()) {
			if (!node.process().isAlive()) {
				throw new AssertionError("the node ended before it signalled " + signal + ": "
						+ node.output().get(10, TimeUnit.SECONDS));
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("no signal " + signal + " within " + NodeSupport.SIGNAL_TIMEOUT);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

}
