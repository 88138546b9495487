package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.StallingProxy;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A stale holder cannot commit: a node (another process) holds a lock with a 2 s lease and
 * has written a read-modify-write of a counter (no token column) in an open transaction when
 * a TCP proxy stalls its traffic; this JVM takes the key once the stalled lease has ended and
 * does the same read-modify-write, which waits for the stalled transaction's row lock; the
 * traffic flows again. With the commit guard the stalled commit is refused
 * ({@code LockLostException}) and no update is lost, run after run; without it, the stalled
 * transaction commits after the take-over and the taker's write, computed from what it read
 * before, overwrites it: one update lost.
 */
abstract class StalledCommitContractTests {

	private static final int GUARDED_RUNS = 5;

	@TempDir
	Path files;

	protected abstract TestDatabase database();

	@Test
	void aStalledHolderCannotCommitAfterATakeOverWithTheGuardAndLosesAnUpdateWithout() throws Exception {
		TestDatabase.Connection settings = database().connection();
		try (HikariDataSource dataSource = database().dataSource(4);
				LockEngine taker = new LockEngine(new JdbcLockRepository(dataSource, database().dialect(dataSource)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("DROP TABLE IF EXISTS db_lock_test_guard_stall_counter");
			jdbc.execute("DROP TABLE IF EXISTS db_lock_test_guard_stall_log");
			jdbc.execute("DROP TABLE IF EXISTS db_lock_test_guard_stall_signal");
			jdbc.execute("CREATE TABLE db_lock_test_guard_stall_counter (id INT PRIMARY KEY, counter_value BIGINT)");
			jdbc.execute("CREATE TABLE db_lock_test_guard_stall_log (id " + (database() == TestDatabase.POSTGRESQL ? "BIGSERIAL"
					: "BIGINT AUTO_INCREMENT") + " PRIMARY KEY, writer VARCHAR(16))");
			jdbc.execute("CREATE TABLE db_lock_test_guard_stall_signal (phase INT)");
			jdbc.update("INSERT INTO db_lock_test_guard_stall_counter VALUES (1, 0)");
			jdbc.update("INSERT INTO db_lock_test_guard_stall_signal VALUES (0)");
			int lostGuarded = 0;
			int staleCommitsGuarded = 0;
			for (int run = 0; run < GUARDED_RUNS; run++) {
				Map<String, String> result = run(jdbc, taker, settings, true, run);
				lostGuarded += lost(jdbc);
				staleCommitsGuarded += result.get("committed").equals("true") ? 1 : 0;
				assertThat(result).containsEntry("failure", "io.github.dblock.LockLostException");
			}
			Map<String, String> unguarded = run(jdbc, taker, settings, false, GUARDED_RUNS);
			int lostUnguarded = lost(jdbc);
			System.out.println(database() + " stalled commit: with the guard, " + GUARDED_RUNS + " runs, "
					+ staleCommitsGuarded + " stale commits, " + lostGuarded + " lost updates; without it, 1 run, "
					+ unguarded.get("committed") + " committed, " + lostUnguarded + " lost updates");
			assertThat(staleCommitsGuarded).isZero();
			assertThat(lostGuarded).isZero();
			assertThat(unguarded).containsEntry("committed", "true");
			assertThat(lostUnguarded).isOne();
		}
	}

	/** Writes that committed minus what the counter says, for the last run (the tables are reset by each run). */
	private int lost(JdbcTemplate jdbc) {
		int written = jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_test_guard_stall_log", Integer.class);
		long counter = jdbc.queryForObject("SELECT counter_value FROM db_lock_test_guard_stall_counter WHERE id = 1", Long.class);
		return (int) (written - counter);
	}

	private Map<String, String> run(JdbcTemplate jdbc, LockEngine taker, TestDatabase.Connection settings,
			boolean guarded, int run) throws Exception {
		jdbc.update("UPDATE db_lock_test_guard_stall_counter SET counter_value = 0");
		jdbc.update("DELETE FROM db_lock_test_guard_stall_log");
		jdbc.update("UPDATE db_lock_test_guard_stall_signal SET phase = 0");
		Path go = this.files.resolve("go-" + run);
		ExecutorService threads = Executors.newSingleThreadExecutor();
		try (StallingProxy proxy = StallingProxy.before(settings)) {
			String proxied = proxy.url(settings);
			NodeSupport.Node node = NodeSupport.start(GuardedCounterNode.class,
					new TestDatabase.Connection(proxied, settings.user(), settings.password(), false), guarded, go);
			try {
				// the node has written in its open transaction; its traffic stalls before it commits
				NodeSupport.awaitSignal(jdbc, "SELECT phase FROM db_lock_test_guard_stall_signal", 1);
				proxy.stall();
				Files.createFile(go);
				try (LockHandle handle = taker.acquire(new LockRequest(GuardedCounterNode.KEY, Duration.ofSeconds(60),
						Duration.ofSeconds(30), true, Duration.ZERO))) {
					TransactionTemplate transaction = new TransactionTemplate(
							new DataSourceTransactionManager(jdbc.getDataSource()));
					Future<?> write = threads.submit(() -> transaction.executeWithoutResult((status) -> {
						long value = jdbc.queryForObject("SELECT counter_value FROM db_lock_test_guard_stall_counter WHERE id = 1",
								Long.class);
						jdbc.update("UPDATE db_lock_test_guard_stall_counter SET counter_value = ? WHERE id = 1", value + 1);
						jdbc.update("INSERT INTO db_lock_test_guard_stall_log (writer) VALUES ('taker')");
					}));
					// the taker's update waits for the stalled transaction's row lock
					await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
						.until(() -> write.isDone() || aSessionWaitsForALock(jdbc));
					proxy.resume();
					write.get(1, TimeUnit.MINUTES);
				}
				return NodeSupport.values(NodeSupport.finish(node));
			}
			finally {
				proxy.resume();
				node.process().destroyForcibly();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	private boolean aSessionWaitsForALock(JdbcTemplate jdbc) {
		String sql = (database() == TestDatabase.POSTGRESQL) ? "SELECT COUNT(*) FROM pg_locks WHERE NOT granted"
				: "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'";
		Long count = jdbc.queryForObject(sql, Long.class);
		return count != null && count > 0;
	}

}
