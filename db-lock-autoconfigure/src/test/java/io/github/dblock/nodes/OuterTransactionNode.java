package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One node whose threads increment a counter, read-modify-write, under the lock, inside
 * an outer transaction that commits after the lock's holder returns: correct only if the
 * lock is released after that commit. A holder counts from its acquisition to its commit,
 * in a row of its own; prints {@code overlaps}, holders that found another one counted.
 */
public final class OuterTransactionNode {

	private OuterTransactionNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, threads, increments per thread
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[3]);
		int increments = Integer.parseInt(args[4]);
		AtomicInteger overlaps = new AtomicInteger();
		// a connection for each thread's transaction, and one for its lock statements
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 2 * threads + 1);
				HikariDataSource outside = NodeSupport.dataSource(args[0], args[1], args[2], threads);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			// holders are counted outside the transactions, lest the counter row's lock serialize them
			JdbcTemplate holders = new JdbcTemplate(outside);
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofMinutes(2), Duration.ofSeconds(30));
			TransactionTemplate outer = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			Concurrently.run(threads, (thread) -> {
				for (int i = 0; i < increments; i++) {
					outer.executeWithoutResult((status) -> template.execute("outer-tx-counter", () -> {
						holders.update("UPDATE db_lock_test_process_counter SET holders = holders + 1 WHERE id = 2");
						if (holders.queryForObject("SELECT holders FROM db_lock_test_process_counter WHERE id = 2",
								Integer.class) > 1) {
							overlaps.incrementAndGet();
						}
						// a holder ends once its data is committed (after-commit callbacks run before any release)
						TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

							@Override
							public void afterCommit() {
								holders.update("UPDATE db_lock_test_process_counter SET holders = holders - 1 WHERE id = 2");
							}

						});
						long value = jdbc.queryForObject(
								"SELECT counter_value FROM db_lock_test_process_counter WHERE id = 1", Long.class);
						jdbc.update("UPDATE db_lock_test_process_counter SET counter_value = ? WHERE id = 1", value + 1);
						return null;
					}));
				}
			});
		}
		System.out.println("overlaps=" + overlaps);
	}

}
