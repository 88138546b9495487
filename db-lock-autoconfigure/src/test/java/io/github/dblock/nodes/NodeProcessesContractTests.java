package io.github.dblock.nodes;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a caller relies on across nodes, with nodes that are separate JVM processes on one
 * database: no node starves on a hot key, a release is visible when it returns, a lock
 * taken inside a transaction outlives its commit, and a randomized history of three nodes
 * has no overlap, no token out of order and no refusal without a holder.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class NodeProcessesContractTests {

	/** Time for the node JVMs to start and open their pools before the common start. */
	private static final long START_MARGIN_MILLIS = 6000;

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	protected abstract TestDatabase database();

	@BeforeAll
	void createTables() {
		this.dataSource = database().dataSource(2);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_fence (id INT PRIMARY KEY, token BIGINT)");
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_turn (id INT PRIMARY KEY, turn INT, rounds INT)");
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_process_counter "
				+ "(id INT PRIMARY KEY, counter_value BIGINT, holders INT)");
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@Test
	void twoNodesOnAHotKeyBothGetAShareAndNobodyTimesOut() throws Exception {
		reset("db_lock_test_fence", "INSERT INTO db_lock_test_fence (id, token) VALUES (1, 0)");
		int threads = 8;
		long durationMillis = 6000;
		long start = System.currentTimeMillis() + START_MARGIN_MILLIS;
		List<Map<String, String>> nodes = NodeSupport.run(2, HotKeyNode.class, database().connection(),
				(node) -> new Object[] { threads, start, durationMillis });
		long total = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("acquired"))).sum();
		long held = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("heldNanos"))).sum();
		System.out.printf(
				"%s hot key, 2 processes x %d threads, %d ms: acquisitions %s, shares %s, timeouts %s, utilisation %.1f%%%n",
				database(), threads, durationMillis, nodes.stream().map((node) -> node.get("acquired")).toList(),
				nodes.stream()
					.map((node) -> String.format("%.1f%%", 100.0 * Long.parseLong(node.get("acquired")) / Math.max(total, 1)))
					.toList(),
				nodes.stream().map((node) -> node.get("timeouts")).toList(), 100.0 * held / (durationMillis * 1e6));
		for (Map<String, String> node : nodes) {
			assertThat(node.get("fenceViolations")).isEqualTo("0");
			assertThat(node.get("timeouts")).isEqualTo("0");
			assertThat(Long.parseLong(node.get("acquired"))).as("a node's share of " + total)
				.isGreaterThanOrEqualTo(total * 3 / 10);
		}
	}

	@Test
	void aReleaseIsVisibleToTheOtherNodeWhenCloseReturns() throws Exception {
		reset("db_lock_test_turn", "INSERT INTO db_lock_test_turn (id, turn, rounds) VALUES (1, 0, 0)");
		int turns = 40;
		List<Map<String, String>> nodes = NodeSupport.run(2, PingPongNode.class, database().connection(),
				(node) -> new Object[] { node, turns });
		System.out.println(database() + " ping-pong refusals: " + nodes.stream().map((node) -> node.get("refusals")).toList());
		for (Map<String, String> node : nodes) {
			assertThat(node.get("refusals")).isEqualTo("0");
		}
		assertThat(this.jdbc.queryForObject("SELECT rounds FROM db_lock_test_turn WHERE id = 1", Integer.class))
			.isEqualTo(2 * turns);
	}

	@Test
	void aNodeThatDiesRightAfterCloseReturnedLeavesNoRowBehind() throws Exception {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		for (int i = 0; i < 5; i++) {
			String key = "dying-" + i;
			assertThat(NodeSupport.run(1, DyingNode.class, database().connection(), (node) -> new Object[] { key }))
				.allSatisfy((node) -> assertThat(node).containsEntry("released", "true"));
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + " WHERE lock_key = ?",
					Integer.class, key))
				.isZero();
		}
	}

	@Test
	void aLockReleasedInsideATransactionOutlivesItsCommitOnEveryNode() throws Exception {
		reset("db_lock_test_process_counter",
				"INSERT INTO db_lock_test_process_counter (id, counter_value, holders) VALUES (1, 0, 0), (2, 0, 0)");
		int threads = 8;
		int increments = 50;
		List<Map<String, String>> nodes = NodeSupport.run(2, OuterTransactionNode.class, database().connection(),
				(node) -> new Object[] { threads, increments });
		long counter = this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_process_counter WHERE id = 1",
				Long.class);
		System.out.println(database() + " outer transactions, 2 processes x " + threads + " threads x " + increments
				+ ": counter " + counter + ", overlaps " + nodes.stream().map((node) -> node.get("overlaps")).toList());
		for (Map<String, String> node : nodes) {
			assertThat(node.get("overlaps")).isEqualTo("0");
		}
		assertThat(counter).isEqualTo(2L * threads * increments);
	}

	@Test
	void aRandomizedHistoryOfThreeNodesHasNoOverlapNoTokenOutOfOrderAndNoRefusalWithoutAHolder(@TempDir Path dir)
			throws Exception {
		int nodes = 3;
		long start = System.currentTimeMillis() + START_MARGIN_MILLIS;
		NodeSupport.run(nodes, ChaosNode.class, database().connection(),
				(node) -> new Object[] { node, start, 20_000, dir.resolve("history-" + node + ".csv") });
		List<Hold> holds = new ArrayList<>();
		List<Span> refusals = new ArrayList<>();
		List<Span> timeouts = new ArrayList<>();
		for (int node = 0; node < nodes; node++) {
			for (String line : Files.readAllLines(dir.resolve("history-" + node + ".csv"), StandardCharsets.UTF_8)) {
				String[] f = line.split(",");
				switch (f[0]) {
					case "H" -> holds.add(new Hold(Integer.parseInt(f[1]), Integer.parseInt(f[2]), f[3], Long.parseLong(f[4]),
							Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]), Long.parseLong(f[8]),
							Boolean.parseBoolean(f[9]), Boolean.parseBoolean(f[10]), Boolean.parseBoolean(f[11])));
					case "R" -> refusals.add(Span.of(f));
					default -> timeouts.add(Span.of(f));
				}
			}
		}
		// two valid holds of a key by different threads at once; a re-entry counts too, against other threads
		int overlaps = 0;
		// a fresh acquisition that ended before another began has the smaller token (a re-entry shares its
		// outer handle's token: it is told apart by that token being open on its thread, and left out)
		int tokensOutOfOrder = 0;
		Map<String, List<Hold>> byKey = holds.stream().collect(Collectors.groupingBy(Hold::key));
		for (List<Hold> ofKey : byKey.values()) {
			for (Hold first : ofKey) {
				for (Hold second : ofKey) {
					if (first.valid() && second.valid() && !first.sameThread(second)
							&& first.acquired() < second.acquired() && second.acquired() < first.beforeClose()) {
						overlaps++;
					}
					if (!first.reentry() && !second.reentry() && first.acquired() < second.before()
							&& first.token() >= second.token()) {
						tokensOutOfOrder++;
					}
				}
			}
		}
		int refusedWithoutHolder = 0;
		for (Span refusal : refusals) {
			boolean held = holds.stream()
				.anyMatch((hold) -> hold.key().equals(refusal.key()) && hold.before() <= refusal.after()
						&& hold.afterClose() >= refusal.before());
			// a thread of its own node waiting in the local queue refuses it too
			boolean queued = timeouts.stream()
				.anyMatch((wait) -> wait.node() == refusal.node() && wait.key().equals(refusal.key())
						&& wait.before() <= refusal.after() && wait.after() >= refusal.before());
			if (!held && !queued) {
				refusedWithoutHolder++;
			}
		}
		long stale = holds.stream().filter((hold) -> !hold.valid()).count();
		System.out.printf(
				"%s safety checker, %d nodes: %d holds (%d re-entries, %d not valid at close, %d lost), %d refusals, %d timeouts; "
						+ "overlaps %d, tokens out of order %d, refusals without a holder %d%n",
				database(), nodes, holds.size(), holds.stream().filter(Hold::reentry).count(), stale,
				holds.stream().filter(Hold::lost).count(), refusals.size(),
				timeouts.size(), overlaps, tokensOutOfOrder, refusedWithoutHolder);
		int overlapsFound = overlaps;
		int tokensFound = tokensOutOfOrder;
		int refusalsFound = refusedWithoutHolder;
		SoftAssertions.assertSoftly((softly) -> {
			softly.assertThat(holds).hasSizeGreaterThan(100);
			softly.assertThat(stale).as("holds that slept past their fixed lease").isPositive();
			softly.assertThat(overlapsFound).as("overlaps").isZero();
			softly.assertThat(tokensFound).as("tokens out of order").isZero();
			softly.assertThat(refusalsFound).as("refusals without a holder").isZero();
		});
	}

	private void reset(String table, String insert) {
		this.jdbc.update("DELETE FROM " + table);
		this.jdbc.update(insert);
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
	}

	/** A hold in a node's history; times are the database's, in microseconds. */
	record Hold(int node, int thread, String key, long token, long before, long acquired, long beforeClose,
			long afterClose, boolean valid, boolean reentry, boolean lost) {

		boolean sameThread(Hold other) {
			return this.node == other.node && this.thread == other.thread;
		}

	}

	/** A refused try or a wait that ran out. */
	record Span(int node, int thread, String key, long before, long after) {

		static Span of(String[] f) {
			return new Span(Integer.parseInt(f[1]), Integer.parseInt(f[2]), f[3], Long.parseLong(f[4]), Long.parseLong(f[5]));
		}

	}

}
