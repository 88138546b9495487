package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node, as a process of its own: threads that increment a counter in the database
 * under db-lock, read-modify-write, and count in the database how many hold the lock at
 * once. Prints {@code overlaps=N} and exits.
 */
public final class CounterNode {

	private CounterNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, threads, increments per thread
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[3]);
		int increments = Integer.parseInt(args[4]);
		AtomicInteger overlaps = new AtomicInteger();
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 8);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofMinutes(2), Duration.ofSeconds(30));
			Concurrently.run(threads, (thread) -> {
				for (int i = 0; i < increments; i++) {
					template.execute("process-counter", () -> {
						jdbc.update("UPDATE db_lock_test_process_counter SET holders = holders + 1 WHERE id = 1");
						if (jdbc.queryForObject("SELECT holders FROM db_lock_test_process_counter WHERE id = 1",
								Integer.class) > 1) {
							overlaps.incrementAndGet();
						}
						long value = jdbc.queryForObject(
								"SELECT counter_value FROM db_lock_test_process_counter WHERE id = 1", Long.class);
						jdbc.update("UPDATE db_lock_test_process_counter SET counter_value = ? WHERE id = 1", value + 1);
						jdbc.update("UPDATE db_lock_test_process_counter SET holders = holders - 1 WHERE id = 1");
						return null;
					});
				}
			});
		}
		System.out.println("overlaps=" + overlaps.get());
	}

}
