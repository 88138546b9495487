package io.github.dblock.nodes;

import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion between nodes that are separate JVM processes on one database: each
 * runs {@link CounterNode}; the database itself counts holders that overlapped.
 */
abstract class SeparateProcessesContractTests {

	private static final int PROCESSES = 2;

	private static final int THREADS = 4;

	private static final int INCREMENTS = 25;

	protected abstract TestDatabase database();

	@Test
	void threadsOfTwoProcessesNeverHoldAKeyTogether() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_process_counter "
					+ "(id INT PRIMARY KEY, counter_value BIGINT, holders INT)");
			jdbc.update("DELETE FROM db_lock_test_process_counter");
			jdbc.update("INSERT INTO db_lock_test_process_counter (id, counter_value, holders) VALUES (1, 0, 0)");
			for (Map<String, String> node : NodeSupport.run(PROCESSES, CounterNode.class, database().connection(),
					(node) -> new Object[] { THREADS, INCREMENTS })) {
				assertThat(node.get("overlaps")).isEqualTo("0");
			}
			assertThat(jdbc.queryForObject("SELECT counter_value FROM db_lock_test_process_counter WHERE id = 1",
					Long.class))
				.isEqualTo((long) PROCESSES * THREADS * INCREMENTS);
		}
	}

}
