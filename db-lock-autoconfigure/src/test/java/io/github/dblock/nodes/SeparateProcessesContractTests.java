package io.github.dblock.nodes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
			TestDatabase.Connection settings = database().connection();
			List<Process> processes = new ArrayList<>();
			for (int i = 0; i < PROCESSES; i++) {
				processes.add(new ProcessBuilder(javaExecutable(), "-cp", System.getProperty("java.class.path"),
						CounterNode.class.getName(), settings.url(), settings.user(), settings.password(),
						String.valueOf(THREADS), String.valueOf(INCREMENTS))
					.redirectErrorStream(true)
					.start());
			}
			for (Process process : processes) {
				String output = output(process);
				assertThat(process.waitFor(5, TimeUnit.MINUTES)).isTrue();
				assertThat(process.exitValue()).as(output).isZero();
				assertThat(output).contains("overlaps=0");
			}
			assertThat(jdbc.queryForObject("SELECT counter_value FROM db_lock_test_process_counter WHERE id = 1",
					Long.class))
				.isEqualTo((long) PROCESSES * THREADS * INCREMENTS);
		}
	}

	private static String output(Process process) throws IOException {
		return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
	}

	private static String javaExecutable() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

}
