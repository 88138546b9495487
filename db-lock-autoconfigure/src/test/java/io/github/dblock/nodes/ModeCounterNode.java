package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One node, as a process of its own, of the transaction or the named mode: threads that
 * each, per increment, take one key in that mode (the transaction mode inside a
 * transaction of the node's data source, the named mode in none), read the counter and
 * write it one up, fenced by the lock's token ({@code fence < token}). How many threads
 * hold the key at once is counted in the database in autocommit, on a pool of its own, so
 * that the count is seen across processes at once and never joins a transaction. Prints
 * {@code overlaps=N} and {@code refused=N} (writes the fence refused) and exits.
 */
public final class ModeCounterNode {

	private ModeCounterNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, mode ({@code TRANSACTION}, {@code NAMED} or {@code FAIR}), key,
	 * threads, increments per thread
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		DbLockMode mode = DbLockMode.valueOf(args[3]);
		String key = args[4];
		int threads = Integer.parseInt(args[5]);
		int increments = Integer.parseInt(args[6]);
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger refused = new AtomicInteger();
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 2 * threads + 2);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], threads);
				LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			JdbcTemplate holders = new JdbcTemplate(side);
			TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofMinutes(2), Duration.ofSeconds(30));
			Runnable increment = () -> {
				try (LockHandle lock = template.acquire(mode, key, null)) {
					holders.update("UPDATE " + ModeNodes.HOLDERS_TABLE + " SET holders = holders + 1 WHERE id = 1");
					if (holders.queryForObject("SELECT holders FROM " + ModeNodes.HOLDERS_TABLE + " WHERE id = 1",
							Integer.class) > 1) {
						overlaps.incrementAndGet();
					}
					long token = lock.fencingToken();
					long value = jdbc.queryForObject(
							"SELECT counter_value FROM " + ModeNodes.COUNTER_TABLE + " WHERE id = 1", Long.class);
					if (jdbc.update("UPDATE " + ModeNodes.COUNTER_TABLE
							+ " SET counter_value = ?, fence = ? WHERE id = 1 AND fence < ?", value + 1, token,
							token) == 0) {
						refused.incrementAndGet();
					}
					holders.update("UPDATE " + ModeNodes.HOLDERS_TABLE + " SET holders = holders - 1 WHERE id = 1");
				}
			};
			Concurrently.run(threads, (thread) -> {
				for (int i = 0; i < increments; i++) {
					if (mode == DbLockMode.TRANSACTION) {
						// the lock ends with the commit, after the counter's write
						transaction.executeWithoutResult((status) -> increment.run());
					}
					else {
						increment.run();
					}
				}
			});
		}
		System.out.println("overlaps=" + overlaps.get());
		System.out.println("refused=" + refused.get());
	}

}
