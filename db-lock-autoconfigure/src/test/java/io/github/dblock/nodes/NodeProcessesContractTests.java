package io.github.dblock.nodes;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
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
		List<Map<String, String>> nodes = hotKey(6000, 0, "none", (node) -> 8, (node) -> 0);
		long total = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("acquired"))).sum();
		for (Map<String, String> node : nodes) {
			assertThat(node.get("fenceViolations")).isEqualTo("0");
			assertThat(node.get("overlaps")).isEqualTo("0");
			assertThat(node.get("timeouts")).isEqualTo("0");
			assertThat(Long.parseLong(node.get("acquired"))).as("a node's share of " + total)
				.isGreaterThanOrEqualTo(total * 3 / 10);
		}
	}

	@Test
	void nodesWhoseCedesCommitButLoseTheirReplyNeverHoldAHotKeyTogether() throws Exception {
		List<Map<String, String>> nodes = hotKey(6000, 0, "lose-ceded-replies", (node) -> 8, (node) -> 0);
		assertThat(nodes.stream().mapToLong((node) -> Long.parseLong(node.get("lostCedeReplies"))).sum())
			.as("cedes whose reply was lost")
			.isPositive();
		for (Map<String, String> node : nodes) {
			assertThat(node.get("fenceViolations")).isEqualTo("0");
			assertThat(node.get("overlaps")).isEqualTo("0");
			assertThat(node.get("timeouts")).isEqualTo("0");
		}
	}

	@Test
	void aRenewedLeaseSharedByTwoNodesAndPassedAmongTheirThreadsIsNeverLost() throws Exception {
		// a 2 s renewed lease for four periods and a half; the second node asks for the key every 3 s, so the
		// first node's lease lives longer than its length, passed among its threads
		List<Map<String, String>> nodes = hotKey(9000, 2000, "none", (node) -> (node == 0) ? 8 : 1,
				(node) -> (node == 0) ? 0 : 3000);
		for (Map<String, String> node : nodes) {
			assertThat(node.get("lost")).isEqualTo("0");
			assertThat(node.get("overlaps")).isEqualTo("0");
			assertThat(node.get("timeouts")).isEqualTo("0");
		}
	}

	/**
	 * Two node processes on one hot key, each with its number of threads and pause between
	 * a thread's holds; prints and returns what each counted.
	 */
	private List<Map<String, String>> hotKey(long durationMillis, long leaseMillis, String fault,
			IntUnaryOperator threads, IntUnaryOperator pauseMillis) throws Exception {
		reset("db_lock_test_fence", "INSERT INTO db_lock_test_fence (id, token) VALUES (1, 0)");
		reset("db_lock_test_process_counter",
				"INSERT INTO db_lock_test_process_counter (id, counter_value, holders) VALUES (1, 0, 0)");
		long start = System.currentTimeMillis() + SafetyChecker.START_MARGIN_MILLIS;
		List<Map<String, String>> nodes = NodeSupport.run(2, HotKeyNode.class, database().connection(),
				(node) -> new Object[] { threads.applyAsInt(node), start, durationMillis, leaseMillis, fault,
						pauseMillis.applyAsInt(node) });
		long total = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("acquired"))).sum();
		long held = nodes.stream().mapToLong((node) -> Long.parseLong(node.get("heldNanos"))).sum();
		System.out.printf(
				"%s hot key, 2 processes x %s threads, %d ms, lease %d ms, fault %s: acquisitions %s, shares %s, "
						+ "timeouts %s, overlaps %s, fence violations %s, lost %s, lost cede replies %s, utilisation %.1f%%%n",
				database(), List.of(threads.applyAsInt(0), threads.applyAsInt(1)), durationMillis, leaseMillis, fault,
				nodes.stream().map((node) -> node.get("acquired")).toList(),
				nodes.stream()
					.map((node) -> String.format("%.1f%%", 100.0 * Long.parseLong(node.get("acquired")) / Math.max(total, 1)))
					.toList(),
				nodes.stream().map((node) -> node.get("timeouts")).toList(),
				nodes.stream().map((node) -> node.get("overlaps")).toList(),
				nodes.stream().map((node) -> node.get("fenceViolations")).toList(),
				nodes.stream().map((node) -> node.get("lost")).toList(),
				nodes.stream().map((node) -> node.get("lostCedeReplies")).toList(), 100.0 * held / (durationMillis * 1e6));
		return nodes;
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
		SafetyChecker.check(database().connection(), database().toString(), dir);
	}

	private void reset(String table, String insert) {
		this.jdbc.update("DELETE FROM " + table);
		this.jdbc.update(insert);
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
	}

}
