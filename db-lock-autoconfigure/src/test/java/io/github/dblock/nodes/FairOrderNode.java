package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node, as a process of its own, of the fair mode's order test: its threads arrive at
 * the key's queue in a known order shared with the other nodes (thread {@code t} of node
 * {@code p} is arrival {@code t * nodes + p}), each enqueuing only once the tickets of every
 * earlier arrival are visible in the queue table (with the test's own ticket, which holds
 * the key meanwhile). Under the lock, each thread counts itself one up in a shared row to
 * learn its place among the acquisitions, and reads the database's clock at acquisition and
 * before release. How many threads hold the key at once is counted in the database in
 * autocommit. Prints, per arrival {@code k}, {@code place.k}, {@code token.k},
 * {@code waited.k} (ms, from the call to the acquisition), {@code acquired.k} and
 * {@code released.k} (the database's clock, in microseconds), then {@code overlaps=N}.
 */
public final class FairOrderNode {

	/** The row that counts acquisitions. */
	static final String PLACES_TABLE = "db_lock_test_fair_places";

	private FairOrderNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, key, this node's index, nodes, threads per node
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		String key = args[3];
		int node = Integer.parseInt(args[4]);
		int nodes = Integer.parseInt(args[5]);
		int threads = Integer.parseInt(args[6]);
		AtomicInteger overlaps = new AtomicInteger();
		StringBuilder report = new StringBuilder();
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 2 * threads + 2);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], threads);
				LockEngine engine = ModeNodes.engine(dataSource)) {
			SqlDialect dialect = SqlDialects.detect(dataSource, TestDatabase.TABLE);
			JdbcTemplate jdbc = new JdbcTemplate(side);
			Concurrently.run(threads, (thread) -> {
				int arrival = thread * nodes + node;
				awaitQueued(jdbc, key, arrival + 1);
				long calledAt = System.nanoTime();
				LockRequest request = new LockRequest(key, Duration.ofMinutes(2), Duration.ofSeconds(30), true,
						Duration.ZERO, DbLockMode.FAIR);
				try (LockHandle lock = engine.acquire(request)) {
					long waited = System.nanoTime() - calledAt;
					long acquired = NodeSupport.databaseMicros(jdbc, dialect);
					jdbc.update("UPDATE " + ModeNodes.HOLDERS_TABLE + " SET holders = holders + 1 WHERE id = 1");
					if (jdbc.queryForObject("SELECT holders FROM " + ModeNodes.HOLDERS_TABLE + " WHERE id = 1",
							Integer.class) > 1) {
						overlaps.incrementAndGet();
					}
					jdbc.update("UPDATE " + PLACES_TABLE + " SET places = places + 1 WHERE id = 1");
					int place = jdbc.queryForObject("SELECT places FROM " + PLACES_TABLE + " WHERE id = 1",
							Integer.class);
					jdbc.update("UPDATE " + ModeNodes.HOLDERS_TABLE + " SET holders = holders - 1 WHERE id = 1");
					long released = NodeSupport.databaseMicros(jdbc, dialect);
					synchronized (report) {
						report.append("place.").append(arrival).append('=').append(place).append('\n');
						report.append("token.").append(arrival).append('=').append(lock.fencingToken()).append('\n');
						report.append("waited.").append(arrival).append('=')
							.append(TimeUnit.NANOSECONDS.toMillis(waited)).append('\n');
						report.append("acquired.").append(arrival).append('=').append(acquired).append('\n');
						report.append("released.").append(arrival).append('=').append(released).append('\n');
					}
				}
			});
		}
		System.out.print(report);
		System.out.println("overlaps=" + overlaps.get());
	}

	/** Polls the queue table until it holds {@code count} tickets of the key. */
	static void awaitQueued(JdbcTemplate jdbc, String key, int count) {
		long deadline = System.nanoTime() + NodeSupport.SIGNAL_TIMEOUT.toNanos();
		while (jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_fair_queue WHERE lock_key = ?",
				Integer.class, key) != count) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("the queue of '" + key + "' never held " + count + " tickets");
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

}
