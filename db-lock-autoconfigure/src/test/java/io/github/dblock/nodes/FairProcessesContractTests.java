package io.github.dblock.nodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.LockRequest;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fair mode between nodes that are separate JVM processes on one database:
 * <ul>
 * <li>three processes of four threads each enqueue in a known order, staggered by the
 * queue table itself ({@link FairOrderNode}), while this test holds the key: once it lets
 * go, the order of acquisitions is the order of arrival (0 inversions), no two threads
 * ever held the key at once, tokens increase, and the longest wait and the hand-off times
 * (the database's clock, from one holder's release to the next one's acquisition) are
 * printed;</li>
 * <li>a process waiting for the key is killed with SIGKILL ({@link ModeHolderNode}) between
 * this test's holder and a waiter behind it: its ticket leaves the queue when its lease ends
 * and the waiter then gets the key, never the dead process;</li>
 * <li>two processes on a hot key, in the fair, lease and named modes, and three in the lease
 * mode: tokens in the order of the holds, no wait run out, the key handed to each process
 * again and again.</li>
 * </ul>
 */
abstract class FairProcessesContractTests {

	private static final int PROCESSES = 3;

	private static final int THREADS = 4;

	private static final Duration LONG_WAIT = Duration.ofSeconds(90);

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private static final int LEAST_HAND_OVERS = 4;

	protected abstract TestDatabase database();

	private static LockRequest request(String key, Duration wait) {
		return new LockRequest(key, wait, Duration.ofSeconds(30), true, Duration.ZERO, DbLockMode.FAIR);
	}

	@Test
	void threadsOfThreeProcessesAreServedInTheOrderTheyArrived() throws Exception {
		String key = "fair-processes-order";
		int arrivals = PROCESSES * THREADS;
		try (HikariDataSource dataSource = database().dataSource(4); LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = prepareTables(dataSource, key);
			LockHandle first = engine.acquire(request(key, Duration.ZERO));
			List<NodeSupport.Node> nodes = new ArrayList<>();
			Map<String, String> values = new HashMap<>();
			try {
				for (int p = 0; p < PROCESSES; p++) {
					nodes.add(NodeSupport.start(FairOrderNode.class, database().connection(), key, p, PROCESSES,
							THREADS));
				}
				FairOrderNode.awaitQueued(jdbc, key, arrivals + 1);
				first.close();
				for (NodeSupport.Node node : nodes) {
					Map<String, String> printed = NodeSupport.values(NodeSupport.finish(node));
					assertThat(printed.get("overlaps")).isEqualTo("0");
					values.putAll(printed);
				}
			}
			finally {
				first.close();
				nodes.forEach((node) -> node.process().destroyForcibly());
			}
			int[] places = new int[arrivals];
			long[] tokens = new long[arrivals];
			long maxWait = 0;
			Map<Integer, Integer> byPlace = new HashMap<>();
			for (int k = 0; k < arrivals; k++) {
				places[k] = Integer.parseInt(values.get("place." + k));
				tokens[k] = Long.parseLong(values.get("token." + k));
				maxWait = Math.max(maxWait, Long.parseLong(values.get("waited." + k)));
				byPlace.put(places[k], k);
			}
			int inversions = 0;
			for (int i = 0; i < arrivals; i++) {
				for (int j = i + 1; j < arrivals; j++) {
					if (places[i] > places[j]) {
						inversions++;
					}
				}
			}
			List<Long> handOffs = new ArrayList<>();
			for (int place = 2; place <= arrivals; place++) {
				int previous = byPlace.get(place - 1);
				int next = byPlace.get(place);
				handOffs.add(Long.parseLong(values.get("acquired." + next))
						- Long.parseLong(values.get("released." + previous)));
			}
			List<Long> sorted = new ArrayList<>(handOffs);
			sorted.sort(null);
			System.out.println(database() + " fair, " + PROCESSES + " processes x " + THREADS + " threads: inversions "
					+ inversions + ", max wait " + maxWait + " ms (including the test's own hold while all "
					+ "enqueued), hand-off release->acquire (database clock) median "
					+ sorted.get(sorted.size() / 2) / 1000.0 + " ms, max " + sorted.get(sorted.size() - 1) / 1000.0
					+ " ms, " + handOffs);
			assertThat(inversions).isZero();
			for (int k = 0; k < arrivals; k++) {
				assertThat(places[k]).as("place of arrival " + k).isEqualTo(k + 1);
				if (k > 0) {
					assertThat(tokens[k]).isGreaterThan(tokens[k - 1]);
				}
			}
			assertThat(tokens[0]).isGreaterThan(first.fencingToken());
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + QUEUE + " WHERE lock_key = ?", Integer.class, key))
				.isZero();
		}
	}

	@Test
	void aKilledWaiterLeavesTheQueueAfterItsLeaseAndTheNextOneProceeds() throws Exception {
		String key = "fair-processes-killed-waiter";
		String signal = "fair-killed-waiter-held";
		try (HikariDataSource dataSource = database().dataSource(4);
				LockEngine holderEngine = ModeNodes.engine(dataSource);
				LockEngine waiterEngine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = prepareTables(dataSource, key);
			LockHandle first = holderEngine.acquire(request(key, Duration.ZERO));
			NodeSupport.Node dying = NodeSupport.start(ModeHolderNode.class, database().connection(), DbLockMode.FAIR,
					key, signal);
			ExecutorService waiterThread = Executors.newSingleThreadExecutor();
			try {
				FairOrderNode.awaitQueued(jdbc, key, 2);
				long deadTicket = jdbc.queryForObject("SELECT MAX(ticket) FROM " + QUEUE + " WHERE lock_key = ?",
						Long.class, key);
				Future<long[]> waiter = waiterThread.submit(() -> {
					try (LockHandle lock = waiterEngine.acquire(request(key, LONG_WAIT))) {
						return new long[] { System.nanoTime(), lock.fencingToken() };
					}
				});
				FairOrderNode.awaitQueued(jdbc, key, 3);
				dying.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				long releasedAt = System.nanoTime();
				first.close();
				long[] acquired = waiter.get(LONG_WAIT.toSeconds() + 30, TimeUnit.SECONDS);
				System.out.println(database() + " fair: a waiter killed with SIGKILL (lease " + ModeHolderNode.LEASE
						+ ") let the next one in " + TimeUnit.NANOSECONDS.toMillis(acquired[0] - releasedAt)
						+ " ms after the holder released (dead ticket " + deadTicket + ", next token " + acquired[1]
						+ ")");
				assertThat(acquired[1]).isGreaterThan(deadTicket);
				// the dead process never held the key
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = ?",
						Integer.class, signal))
					.isZero();
			}
			finally {
				first.close();
				waiterThread.shutdownNow();
				dying.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
	}

	/**
	 * Two processes of four threads each on one hot key, for a few seconds, in the fair, lease
	 * and named modes: no holder ever acts after a newer one (in the fair mode, whose tokens are
	 * the tickets, that is arrival order across the processes), no two holds share a token, no
	 * wait runs out, and the key comes to each process from the other at least
	 * {@value #LEAST_HAND_OVERS} times in token order (neither keeps it while the other waits).
	 * Each process's share, the hand-overs, the utilisation (the time the key was held over the
	 * run) and the longest wait are printed; a floor under the shares and the utilisation
	 * depends on how fast each process runs on the machine and is a target of the benchmark
	 * (scenario 3), not of this test.
	 */
	@ParameterizedTest
	@EnumSource(value = DbLockMode.class, names = { "FAIR", "LEASE", "NAMED" })
	void twoProcessesShareAHotKey(DbLockMode mode) throws Exception {
		processesShareAHotKey(2, mode, 3000, 5000);
	}

	/**
	 * Three processes on one hot key in the lease mode, for 8 s with waits of 10 s (the
	 * longest wait measured about 3 s on MariaDB): as with two, and no two of them pass the key
	 * between themselves while the third waits (each gets it from another at least
	 * {@value #LEAST_HAND_OVERS} times, and none of its waits runs out).
	 */
	@Test
	void threeProcessesShareAHotKeyInTheLeaseMode() throws Exception {
		processesShareAHotKey(3, DbLockMode.LEASE, 8000, 10000);
	}

	private void processesShareAHotKey(int processes, DbLockMode mode, long durationMillis, long waitMillis)
			throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_fence (id INT PRIMARY KEY, token BIGINT NOT NULL)");
			jdbc.update("DELETE FROM db_lock_test_fence");
			jdbc.update("INSERT INTO db_lock_test_fence (id, token) VALUES (1, 0)");
			String key = "fair-hot-" + processes + "-" + mode;
			long start = System.currentTimeMillis() + 4000;
			List<Map<String, String>> nodes = NodeSupport.run(processes, FairHotKeyNode.class,
					database().connection(),
					(node) -> new Object[] { mode, key, THREADS, start, durationMillis, waitMillis });
			long total = 0;
			long held = 0;
			List<Long> acquired = new ArrayList<>();
			List<long[]> holds = new ArrayList<>();
			for (int i = 0; i < nodes.size(); i++) {
				Map<String, String> node = nodes.get(i);
				assertThat(node.get("fenceViolations")).isEqualTo("0");
				acquired.add(Long.parseLong(node.get("acquired")));
				total += Long.parseLong(node.get("acquired"));
				held += Long.parseLong(node.get("heldNanos"));
				for (String token : node.get("tokens").split(",")) {
					if (!token.isEmpty()) {
						holds.add(new long[] { Long.parseLong(token), i });
					}
				}
			}
			holds.sort((a, b) -> Long.compare(a[0], b[0]));
			int[] handedTo = new int[processes];
			int sharedTokens = 0;
			for (int k = 1; k < holds.size(); k++) {
				if (holds.get(k)[0] == holds.get(k - 1)[0]) {
					sharedTokens++;
				}
				if (holds.get(k)[1] != holds.get(k - 1)[1]) {
					handedTo[(int) holds.get(k)[1]]++;
				}
			}
			StringBuilder shares = new StringBuilder();
			for (int i = 0; i < nodes.size(); i++) {
				shares.append(String.format(" JVM%d %d (%.0f%%, handed to it %d times, timeouts %s, max wait %s ms)",
						i + 1, acquired.get(i), 100.0 * acquired.get(i) / Math.max(1, total), handedTo[i],
						nodes.get(i).get("timeouts"), nodes.get(i).get("maxWaitMillis")));
			}
			System.out.println(String.format("%s hot key, %s, %d processes x %d threads, %d ms: %d acquisitions "
					+ "(%.0f/s), utilisation %.0f%%,%s", database(), mode, processes, THREADS, durationMillis, total,
					total * 1000.0 / durationMillis, 100.0 * held / TimeUnit.MILLISECONDS.toNanos(durationMillis),
					shares));
			assertThat(holds).hasSize((int) total);
			assertThat(sharedTokens).isZero();
			// no node starves another: no wait runs out, and each gets the key back from the others
			assertThat(nodes).allMatch((node) -> "0".equals(node.get("timeouts")));
			assertThat(Arrays.stream(handedTo).min().orElse(0)).as("fewest times the key came to a process, of "
					+ Arrays.toString(handedTo)).isGreaterThanOrEqualTo(LEAST_HAND_OVERS);
		}
	}

	private static JdbcTemplate prepareTables(HikariDataSource dataSource, String key) {
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.HOLDERS_TABLE
				+ " (id INT PRIMARY KEY, holders INT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.SIGNAL_TABLE
				+ " (name VARCHAR(100) PRIMARY KEY, signal_value BIGINT NOT NULL)");
		jdbc.execute("CREATE TABLE IF NOT EXISTS " + FairOrderNode.PLACES_TABLE
				+ " (id INT PRIMARY KEY, places INT NOT NULL)");
		jdbc.update("DELETE FROM " + ModeNodes.HOLDERS_TABLE);
		jdbc.update("INSERT INTO " + ModeNodes.HOLDERS_TABLE + " (id, holders) VALUES (1, 0)");
		jdbc.update("DELETE FROM " + FairOrderNode.PLACES_TABLE);
		jdbc.update("INSERT INTO " + FairOrderNode.PLACES_TABLE + " (id, places) VALUES (1, 0)");
		jdbc.update("DELETE FROM " + ModeNodes.SIGNAL_TABLE);
		jdbc.update("DELETE FROM " + QUEUE + " WHERE lock_key = ?", key);
		return jdbc;
	}

}
