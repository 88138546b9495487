package io.github.dblock.nodes;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node, as a process of its own, of the read/write modes: threads that each take one key
 * again and again, for writing every {@code writeEvery}-th time (never for 0) and else for
 * reading, each with the default lease renewed while held, until they have done their
 * operations or the test writes the stop signal. How many readers and writers hold the key
 * is counted in the database in autocommit on a pool of its own, so that every process sees
 * it at once: a writer that finds anyone else in, or a reader that finds a writer, is an
 * overlap. A writer increments the counter fenced by its token ({@code fence < token}).
 * Writes the signal {@code streaming-<node>} once every thread held the key once; prints
 * {@code overlaps=N}, {@code refused=N} (fenced writes refused), {@code reads=N},
 * {@code writes=N} and {@code mostReaders=N} (the most readers it saw in at once).
 */
public final class ReadWriteNode {

	/** Counts of holders: one row, {@code readers} and {@code writers}. */
	static final String HOLDERS_TABLE = "db_lock_test_rw_holders";

	/** The signal that ends the nodes' loops. */
	static final String STOP = "rw-stop";

	private ReadWriteNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, node name, key, threads, operations per thread,
	 * write every n-th operation (0 for none), lease in milliseconds, hold in milliseconds
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		String node = args[3];
		String key = args[4];
		int threads = Integer.parseInt(args[5]);
		int operations = Integer.parseInt(args[6]);
		int writeEvery = Integer.parseInt(args[7]);
		Duration lease = Duration.ofMillis(Long.parseLong(args[8]));
		long holdMillis = Long.parseLong(args[9]);
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger refused = new AtomicInteger();
		AtomicInteger reads = new AtomicInteger();
		AtomicInteger writes = new AtomicInteger();
		AtomicInteger mostReaders = new AtomicInteger();
		AtomicInteger streaming = new AtomicInteger();
		AtomicBoolean stopped = new AtomicBoolean();
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], threads + 2);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], threads + 1);
				LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate counts = new JdbcTemplate(side);
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofMinutes(2), lease);
			Concurrently.run(threads, (thread) -> {
				for (int i = 0; i < operations && !stopped(counts, stopped); i++) {
					boolean write = writeEvery > 0 && (i + thread) % writeEvery == 0;
					try (LockHandle lock = template.acquire(write ? DbLockMode.WRITE : DbLockMode.READ, key, null)) {
						if (write) {
							counts.update("UPDATE " + HOLDERS_TABLE + " SET writers = writers + 1 WHERE id = 1");
							if (!alone(counts)) {
								overlaps.incrementAndGet();
							}
							long token = lock.fencingToken();
							if (counts.update("UPDATE " + ModeNodes.COUNTER_TABLE
									+ " SET counter_value = counter_value + 1, fence = ? WHERE id = 1 AND fence < ?", token,
									token) == 0) {
								refused.incrementAndGet();
							}
							Thread.sleep(holdMillis);
							if (!alone(counts)) {
								overlaps.incrementAndGet();
							}
							counts.update("UPDATE " + HOLDERS_TABLE + " SET writers = writers - 1 WHERE id = 1");
							writes.incrementAndGet();
						}
						else {
							counts.update("UPDATE " + HOLDERS_TABLE + " SET readers = readers + 1 WHERE id = 1");
							mostReaders.accumulateAndGet(readers(counts), Math::max);
							if (i == 0 && streaming.incrementAndGet() == threads) {
								counts.update("INSERT INTO " + ModeNodes.SIGNAL_TABLE + " (name, signal_value) VALUES (?, 1)",
										"streaming-" + node);
							}
							if (writers(counts) != 0) {
								overlaps.incrementAndGet();
							}
							Thread.sleep(holdMillis);
							if (writers(counts) != 0) {
								overlaps.incrementAndGet();
							}
							counts.update("UPDATE " + HOLDERS_TABLE + " SET readers = readers - 1 WHERE id = 1");
							reads.incrementAndGet();
						}
					}
				}
			});
		}
		System.out.println("overlaps=" + overlaps.get());
		System.out.println("refused=" + refused.get());
		System.out.println("reads=" + reads.get());
		System.out.println("writes=" + writes.get());
		System.out.println("mostReaders=" + mostReaders.get());
	}

	private static boolean stopped(JdbcTemplate counts, AtomicBoolean stopped) {
		if (!stopped.get() && !counts
			.queryForList("SELECT name FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name = ?", String.class, STOP)
			.isEmpty()) {
			stopped.set(true);
		}
		return stopped.get();
	}

	private static boolean alone(JdbcTemplate counts) {
		List<int[]> row = counts.query("SELECT readers, writers FROM " + HOLDERS_TABLE + " WHERE id = 1",
				(rs, i) -> new int[] { rs.getInt(1), rs.getInt(2) });
		return row.get(0)[0] == 0 && row.get(0)[1] == 1;
	}

	private static int readers(JdbcTemplate counts) {
		return counts.queryForObject("SELECT readers FROM " + HOLDERS_TABLE + " WHERE id = 1", Integer.class);
	}

	private static int writers(JdbcTemplate counts) {
		return counts.queryForObject("SELECT writers FROM " + HOLDERS_TABLE + " WHERE id = 1", Integer.class);
	}

}
