package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node, as a process of its own, of the semaphore mode: threads that each, once every
 * node is ready ({@link #awaitNodes}) and for a given time, take a permit of one key (with a wait
 * long enough that none runs out and a lease renewed while held), then, holding it, count
 * themselves in a row of holders inside (in autocommit, on a pool of their own, so that the
 * count is seen across processes at once), read the count, append the permit's key and
 * fencing token to a table whose ids follow the order of the appends, hold 10 to 50 ms and
 * count themselves out. Only one holder has a permit's key at a time, so that the order of
 * the ids of one permit key is the order of its acquisitions. Prints {@code acquired},
 * {@code timeouts}, {@code maxInside} (the most holders inside seen), {@code atFull} (how
 * many saw every permit held), {@code violations} (counts above the permits), {@code lost}
 * (permits no longer held when they were given back), {@code maxWaitMillis} and
 * {@code startedAt} (the epoch milliseconds at which the node saw every node ready).
 */
public final class SemaphoreNode {

	/** The row that counts the holders inside, across processes. */
	static final String INSIDE_TABLE = "db_lock_test_semaphore_inside";

	/** Each acquisition's permit key and token, by an id that increases with each append. */
	static final String PERMITS_TABLE = "db_lock_test_semaphore_permits";

	/** How long a thread waits for a permit: long enough that none runs out. */
	static final Duration WAIT = Duration.ofSeconds(30);

	private SemaphoreNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, key, permits, this node's index, nodes, threads,
	 * duration in milliseconds
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		String key = args[3];
		int permits = Integer.parseInt(args[4]);
		int node = Integer.parseInt(args[5]);
		int nodes = Integer.parseInt(args[6]);
		int threads = Integer.parseInt(args[7]);
		long durationNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[8]));
		AtomicInteger acquired = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		AtomicInteger atFull = new AtomicInteger();
		AtomicInteger violations = new AtomicInteger();
		AtomicInteger lost = new AtomicInteger();
		AtomicLong maxWaitNanos = new AtomicLong();
		LockRequest request = new LockRequest(key, WAIT, Duration.ofSeconds(30), true, Duration.ZERO,
				DbLockMode.SEMAPHORE, permits);
		long startedAt;
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], threads + 2);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], threads);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(side);
			awaitNodes(jdbc, key, node, nodes);
			startedAt = System.currentTimeMillis();
			long end = System.nanoTime() + durationNanos;
			Concurrently.run(threads, (thread) -> {
				while (System.nanoTime() - end < 0) {
					long asked = System.nanoTime();
					try (LockHandle permit = engine.acquire(request)) {
						maxWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
						acquired.incrementAndGet();
						jdbc.update("UPDATE " + INSIDE_TABLE + " SET inside = inside + 1 WHERE id = 1");
						try {
							int inside = jdbc.queryForObject("SELECT inside FROM " + INSIDE_TABLE + " WHERE id = 1",
									Integer.class);
							maxInside.accumulateAndGet(inside, Math::max);
							if (inside == permits) {
								atFull.incrementAndGet();
							}
							if (inside > permits) {
								violations.incrementAndGet();
							}
							jdbc.update("INSERT INTO " + PERMITS_TABLE + " (permit_key, token, node) VALUES (?, ?, ?)",
									permit.key(), permit.fencingToken(), node);
							LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(10, 51)));
							if (!permit.isHeld()) {
								lost.incrementAndGet();
							}
						}
						finally {
							jdbc.update("UPDATE " + INSIDE_TABLE + " SET inside = inside - 1 WHERE id = 1");
						}
					}
					catch (LockAcquisitionException ex) {
						timeouts.incrementAndGet();
					}
				}
			});
		}
		System.out.println("acquired=" + acquired);
		System.out.println("timeouts=" + timeouts);
		System.out.println("maxInside=" + maxInside);
		System.out.println("atFull=" + atFull);
		System.out.println("violations=" + violations);
		System.out.println("lost=" + lost);
		System.out.println("maxWaitMillis=" + TimeUnit.NANOSECONDS.toMillis(maxWaitNanos.get()));
		System.out.println("startedAt=" + startedAt);
	}

	/**
	 * Tells the other nodes that this one is ready (a signal row {@code <name>-ready-<node>})
	 * and polls until all {@code nodes} are: a start shared by nodes whose JVMs take their
	 * own time to start.
	 * @param jdbc where the signal rows are
	 * @param name the run's name
	 * @param node this node's index
	 * @param nodes how many nodes run
	 */
	static void awaitNodes(JdbcTemplate jdbc, String name, int node, int nodes) {
		jdbc.update("INSERT INTO " + ModeNodes.SIGNAL_TABLE + " (name, signal_value) VALUES (?, ?)",
				name + "-ready-" + node, System.currentTimeMillis());
		NodeSupport.awaitSignal(jdbc,
				"SELECT COUNT(*) FROM " + ModeNodes.SIGNAL_TABLE + " WHERE name LIKE '" + name + "-ready-%'", nodes);
	}

}
