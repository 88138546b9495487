package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.OwnServer;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The database killed ({@code kill -9}) and restarted under two processes of eight threads
 * each, on a server of the test's own: callers are told the database failed, none
 * waits past its wait plus the statement limit, work resumes without restarting the
 * nodes, the fenced counter loses nothing, and the tokens of accepted writes keep
 * increasing across the restart.
 */
abstract class DatabaseRestartContractTests {

	private static final int PROCESSES = 2;

	private static final int THREADS = 8;

	/** How long the database stays down: the fault injected, not a wait for anything. */
	private static final Duration OUTAGE = Duration.ofSeconds(3);

	/** Starts the server the test kills. */
	protected abstract OwnServer start() throws Exception;

	/**
	 * Whether callers must be told the database failed: yes for a single server; a cluster
	 * whose clients fail over to the members left may hide the loss of one.
	 */
	protected boolean callersSeeTheOutage() {
		return true;
	}

	/**
	 * How long the JDBC driver's own failover may add to a statement: nothing for a single
	 * server. No acquisition may take longer than its wait plus the statement limit plus the
	 * pool's timeout plus a second, plus this.
	 */
	protected Duration driverFailover() {
		return Duration.ZERO;
	}

	/**
	 * Reports what the server counted of the run, after it: nothing by default.
	 * @param server the server, running again
	 * @param acquisitions the acquisitions the nodes made (their increments)
	 * @param seconds how long the nodes ran
	 */
	protected void report(OwnServer server, long acquisitions, double seconds) {
	}

	@Test
	void theDatabaseKilledAndRestartedMidRun() throws Exception {
		try (OwnServer database = start()) {
			long restartedAt;
			long lastIdBeforeKill;
			List<Map<String, String>> results = new ArrayList<>();
			Path stop = Files.createTempFile(Path.of("target").toAbsolutePath(), "chaos-stop-", "");
			Files.delete(stop);
			List<NodeSupport.Node> nodes = new ArrayList<>();
			try (HikariDataSource dataSource = NodeSupport.dataSource(database.url(), database.user(), "", 2)) {
				new DbLockSchemaMigration(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE)).afterPropertiesSet();
				JdbcTemplate jdbc = new JdbcTemplate(dataSource);
				jdbc.execute("CREATE TABLE chaos_counter (id INT PRIMARY KEY, counter_value BIGINT, fence BIGINT)");
				jdbc.execute("CREATE TABLE chaos_log (id " + database.generatedKey()
						+ " PRIMARY KEY, token BIGINT, counter_value BIGINT)");
				jdbc.update("INSERT INTO chaos_counter VALUES (1, 0, 0)");
				TestDatabase.Connection connection = new TestDatabase.Connection(database.url(), database.user(), "", false);
				long started = System.nanoTime();
				try {
					for (int i = 0; i < PROCESSES; i++) {
						nodes.add(NodeSupport.start(DatabaseRestartNode.class, connection, THREADS, stop,
							driverFailover().toMillis()));
					}
					await().atMost(Duration.ofMinutes(2)).until(() -> counter(jdbc) >= 100);
					lastIdBeforeKill = jdbc.queryForObject("SELECT MAX(id) FROM chaos_log", Long.class);
					database.kill();
					Thread.sleep(OUTAGE.toMillis());
					database.restart();
					restartedAt = await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> counter(jdbc),
							(value) -> value >= 0);
					// work resumes on the nodes that saw the database die
					await().atMost(Duration.ofMinutes(2)).ignoreExceptions().until(() -> counter(jdbc) >= restartedAt + 100);
				}
				finally {
					Files.createFile(stop);
				}
				for (NodeSupport.Node node : nodes) {
					String output = NodeSupport.finish(node);
					System.out.println("node: " + output.lines().filter((line) -> !line.contains(" ")).toList());
					results.add(NodeSupport.values(output));
				}
				long increments = sum(results, "increments");
				long workErrors = sum(results, "workErrors");
				report(database, increments, (System.nanoTime() - started) / 1e9);
				long counter = counter(jdbc);
				System.out.println("restart: counter=" + counter + " increments=" + increments + " workErrors="
						+ workErrors + " rejected=" + sum(results, "rejected") + " databaseErrors="
						+ sum(results, "databaseErrors") + " timeouts=" + sum(results, "timeouts") + " overruns="
						+ sum(results, "overruns") + " unclearErrors=" + sum(results, "unclearErrors"));
				// nothing acknowledged is lost; a write whose commit failed may or may not be in
				assertThat(counter).isBetween(increments, increments + workErrors);
				assertThat(sum(results, "overruns")).isZero();
				assertThat(sum(results, "unclearErrors")).isZero();
				if (callersSeeTheOutage()) {
					assertThat(sum(results, "databaseErrors")).isPositive();
				}
				List<Long> tokens = jdbc.queryForList("SELECT token FROM chaos_log ORDER BY counter_value", Long.class);
				int inversions = 0;
				for (int i = 1; i < tokens.size(); i++) {
					if (tokens.get(i) <= tokens.get(i - 1)) {
						inversions++;
					}
				}
				System.out.println("restart: accepted writes=" + tokens.size() + " token inversions=" + inversions);
				assertThat(inversions).isZero();
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM chaos_log WHERE id > ?", Long.class,
						lastIdBeforeKill)).isPositive();
			}
			finally {
				for (NodeSupport.Node node : nodes) {
					node.process().destroyForcibly();
				}
			}
		}
	}

	private static long counter(JdbcTemplate jdbc) {
		return jdbc.queryForObject("SELECT counter_value FROM chaos_counter WHERE id = 1", Long.class);
	}

	private static long sum(List<Map<String, String>> results, String name) {
		return results.stream().mapToLong((values) -> Long.parseLong(values.get(name))).sum();
	}

}
