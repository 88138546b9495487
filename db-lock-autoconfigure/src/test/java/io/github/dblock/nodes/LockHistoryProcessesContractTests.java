package io.github.dblock.nodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.maintenance.LockRecovery;
import io.github.dblock.jdbc.JdbcLockHistoryRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lock log across real processes ({@link HistoryNode}): two nodes take a shared key in
 * turns and then each holds a key of its own; one is killed with SIGKILL, the other's hold
 * is freed by the recovery job for lasting too long. Every acquisition has exactly one row:
 * the shared key's released, the killed node's expired (closed by the job once its lease
 * ran out), the overlong one's recovered.
 */
abstract class LockHistoryProcessesContractTests {

	private static final int CYCLES = 40;

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	protected abstract TestDatabase database();

	@Test
	void everyAcquisitionOfTwoProcessesHasOneRowWithItsOutcome() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(4)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("CREATE TABLE IF NOT EXISTS " + ModeNodes.SIGNAL_TABLE
					+ " (name VARCHAR(64) PRIMARY KEY, signal_value BIGINT)");
			jdbc.update("DELETE FROM " + ModeNodes.SIGNAL_TABLE);
			jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_history");
			TestDatabase.Connection database = database().connection();
			List<NodeSupport.Node> nodes = new ArrayList<>();
			JdbcLockRepository leases = new JdbcLockRepository(dataSource, database().dialect(dataSource));
			LockEngine engine = new LockEngine(leases,
					LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
			JdbcLockHistoryRepository history = new JdbcLockHistoryRepository(leases.connections());
			LockRecovery expiry = new LockRecovery(engine, history, null, Duration.ofDays(7), Duration.ofMinutes(1));
			LockRecovery overlong = new LockRecovery(engine, history, Duration.ofSeconds(1), Duration.ofDays(7), Duration.ofMinutes(1));
			try {
				nodes.add(NodeSupport.start(HistoryNode.class, database, "history-shared", CYCLES, "history-killed",
						"killed-holds"));
				nodes.add(NodeSupport.start(HistoryNode.class, database, "history-shared", CYCLES, "history-overlong",
						"overlong-holds"));
				NodeSupport.awaitSignal(jdbc, "SELECT COUNT(*) FROM " + ModeNodes.SIGNAL_TABLE, 2);
				// kill -9: nothing of the node's writes the end of its hold
				nodes.get(0).process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				// the job closes its row once its lease has run out in the database
				await().atMost(PATIENCE)
					.pollInterval(Duration.ofMillis(100))
					.until(() -> {
						expiry.run();
						return outcome(jdbc, "history-killed");
					}, "expired"::equals);
				// the live node's hold is freed for lasting longer than a second
				await().atMost(PATIENCE)
					.pollInterval(Duration.ofMillis(100))
					.until(() -> overlong.run().map(LockRecovery.Run::recovered).orElse(0), (freed) -> freed > 0);
				assertThat(outcome(jdbc, "history-overlong")).isEqualTo("recovered");
			}
			finally {
				for (NodeSupport.Node node : nodes) {
					node.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				}
				expiry.stop();
				overlong.stop();
				engine.close();
			}
			List<Map<String, Object>> shared = jdbc.queryForList("SELECT owner, token, outcome FROM "
					+ TestDatabase.TABLE + "_history WHERE lock_key = 'history-shared'");
			// one row per acquisition: a thread alone in its node never hands a hold on
			assertThat(shared).hasSize(2 * CYCLES);
			assertThat(shared).extracting((row) -> row.get("outcome")).containsOnly("released");
			assertThat(shared).extracting((row) -> row.get("token")).doesNotHaveDuplicates();
			assertThat(shared).extracting((row) -> row.get("owner")).doesNotHaveDuplicates();
			assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_history", Integer.class))
				.isEqualTo(2 * CYCLES + 2);
		}
	}

	private static String outcome(JdbcTemplate jdbc, String key) {
		List<String> outcomes = jdbc.queryForList(
				"SELECT outcome FROM " + TestDatabase.TABLE + "_history WHERE lock_key = ?", String.class, key);
		assertThat(outcomes).hasSize(1);
		return String.valueOf(outcomes.get(0));
	}

}
