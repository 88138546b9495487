package io.github.dblock.shedlock.nodes;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.jdbc.dialect.SqlDialects;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ShedLock's own annotations over db-lock, in two Spring Boot applications that are
 * separate JVM processes on one MariaDB database ({@link ShedLockNode}): each scheduled
 * slot runs on one node only, no two runs overlap in the database's time, and the fencing
 * tokens the runs read through {@code DbLockContext} increase from run to run.
 */
class MariaDbShedLockProcessesTests {

	/** The runs, after both nodes are up, that each node waits for before it ends. */
	private static final int CONTENDED_RUNS = 6;

	private static final Duration NODE_TIMEOUT = Duration.ofSeconds(50);

	/** One run of the job, as its node recorded it. */
	record Run(long slot, String node, long token, String key, boolean held, Timestamp startedAt,
			Timestamp endedAt) {
	}

	@Test
	void eachScheduledSlotRunsOnOneNodeWithIncreasingTokens() throws Exception {
		MariaDbTestDatabase database = MariaDbTestDatabase.fromEnvironment();
		SimpleDriverDataSource dataSource = new SimpleDriverDataSource(new org.mariadb.jdbc.Driver(), database.url(),
				database.user(), database.password());
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);
		dropTables(jdbc);
		try {
			new DbLockSchemaMigration(dataSource, SqlDialects.detect(dataSource, ShedLockNode.TABLE)).afterPropertiesSet();
			jdbc.execute("CREATE TABLE " + ShedLockNode.RUNS_TABLE + " (slot BIGINT NOT NULL, node VARCHAR(16) NOT NULL, "
					+ "token BIGINT NOT NULL, lock_key VARCHAR(255) NOT NULL, held BOOLEAN NOT NULL, "
					+ "started_at DATETIME(6) NOT NULL, ended_at DATETIME(6))");
			jdbc.execute("CREATE TABLE " + ShedLockNode.NODES_TABLE
					+ " (node VARCHAR(16) NOT NULL, ready_at DATETIME(6) NOT NULL)");
			List<NodeProcess> nodes = new ArrayList<>();
			List<String> printed = new ArrayList<>();
			try {
				for (String node : List.of("node-a", "node-b")) {
					nodes.add(NodeProcess.start(ShedLockNode.class, node, database.url(), database.user(),
							database.password(), node, CONTENDED_RUNS, NODE_TIMEOUT.toSeconds() - 5));
				}
				for (NodeProcess node : nodes) {
					printed.add(node.finish(NODE_TIMEOUT));
				}
			}
			finally {
				nodes.forEach(NodeProcess::destroy);
			}
			assertThat(printed).allSatisfy((output) -> assertThat(output).contains("lockProvider=DbLockShedLockProvider"));
			List<Run> runs = jdbc.query("SELECT slot, node, token, lock_key, held, started_at, ended_at FROM "
					+ ShedLockNode.RUNS_TABLE + " ORDER BY started_at",
					(rs, row) -> new Run(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getString(4), rs.getBoolean(5),
							rs.getTimestamp(6), rs.getTimestamp(7)));
			runs.forEach((run) -> System.out.println("shedlock processes: " + run));
			assertThat(runs).hasSizeGreaterThanOrEqualTo(CONTENDED_RUNS);
			assertThat(runs).extracting(Run::node).contains("node-a", "node-b");
			assertThat(runs).allSatisfy((run) -> {
				assertThat(run.key()).isEqualTo(ShedLockNode.JOB);
				assertThat(run.held()).isTrue();
				assertThat(run.endedAt()).as("end of %s", run).isNotNull();
			});
			Map<Long, List<Run>> bySlot = runs.stream().collect(Collectors.groupingBy(Run::slot));
			assertThat(bySlot).allSatisfy((slot, inSlot) -> assertThat(inSlot).as("runs of slot %d", slot).hasSize(1));
			for (int i = 1; i < runs.size(); i++) {
				Run previous = runs.get(i - 1);
				Run run = runs.get(i);
				assertThat(run.startedAt()).as("start of %s after %s", run, previous).isAfterOrEqualTo(previous.endedAt());
				assertThat(run.token()).as("token of %s after %s", run, previous).isGreaterThan(previous.token());
			}
		}
		finally {
			dropTables(jdbc);
		}
	}

	/** Every table and sequence of these tests: the runs, the nodes, db-lock's tables and their history. */
	private static void dropTables(JdbcTemplate jdbc) {
		for (Map<String, Object> table : jdbc.queryForList("SELECT table_name AS name, table_type AS type"
				+ " FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?",
				ShedLockNode.TABLE.replace("_", "\\_") + "%")) {
			String kind = "SEQUENCE".equals(table.get("type")) ? "SEQUENCE" : "TABLE";
			jdbc.execute("DROP " + kind + " IF EXISTS `" + table.get("name") + "`");
		}
	}

}
