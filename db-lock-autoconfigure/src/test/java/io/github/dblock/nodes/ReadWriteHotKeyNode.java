package io.github.dblock.nodes;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node on a hot key of the read/write modes: threads that each take one key for
 * reading or for writing (as the node is told), with a given wait, hold it a given time
 * and release it, again and again, from a start time shared with the other nodes. How many
 * readers and writers hold the key is counted in the database in autocommit on a pool of
 * its own: a writer that finds anyone else in, or a reader that finds a writer, is an
 * overlap. Prints {@code acquired}, {@code timeouts}, {@code overlaps} and {@code heldNanos}:
 * the time at least one of its threads held the key (readers that hold it together count
 * once).
 */
public final class ReadWriteHotKeyNode {

	private ReadWriteHotKeyNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, {@code READ} or {@code WRITE}, threads, start
	 * (epoch milliseconds), duration in milliseconds, hold in milliseconds, wait in
	 * milliseconds
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		DbLockMode mode = DbLockMode.valueOf(args[3]);
		int threads = Integer.parseInt(args[4]);
		long start = Long.parseLong(args[5]);
		long durationNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[6]));
		long holdNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[7]));
		Duration wait = Duration.ofMillis(Long.parseLong(args[8]));
		AtomicInteger acquired = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger holding = new AtomicInteger();
		AtomicLong heldSince = new AtomicLong();
		AtomicLong heldNanos = new AtomicLong();
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], threads + 2);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], threads + 1)) {
			LockEngine engine = ModeNodes.engine(dataSource);
			JdbcTemplate counts = new JdbcTemplate(side);
			DbLockTemplate template = new DbLockTemplate(engine, "", wait, Duration.ofSeconds(30));
			NodeSupport.awaitStart(start);
			long end = System.nanoTime() + durationNanos;
			Concurrently.run(threads, (thread) -> {
				while (System.nanoTime() - end < 0) {
					try (LockHandle lock = template.acquire(mode, "rw-hot", wait)) {
						synchronized (holding) {
							if (holding.getAndIncrement() == 0) {
								heldSince.set(System.nanoTime());
							}
						}
						String column = (mode == DbLockMode.WRITE) ? "writers" : "readers";
						counts.update("UPDATE " + ReadWriteNode.HOLDERS_TABLE + " SET " + column + " = " + column
								+ " + 1 WHERE id = 1");
						if (overlapped(counts, mode)) {
							overlaps.incrementAndGet();
						}
						LockSupport.parkNanos(holdNanos);
						if (overlapped(counts, mode)) {
							overlaps.incrementAndGet();
						}
						counts.update("UPDATE " + ReadWriteNode.HOLDERS_TABLE + " SET " + column + " = " + column
								+ " - 1 WHERE id = 1");
						acquired.incrementAndGet();
						synchronized (holding) {
							if (holding.decrementAndGet() == 0) {
								heldNanos.addAndGet(System.nanoTime() - heldSince.get());
							}
						}
					}
					catch (LockAcquisitionException ex) {
						timeouts.incrementAndGet();
					}
				}
			});
			engine.close();
		}
		System.out.println("acquired=" + acquired);
		System.out.println("timeouts=" + timeouts);
		System.out.println("overlaps=" + overlaps);
		System.out.println("heldNanos=" + heldNanos);
	}

	/** A writer with anyone else in, or a reader with a writer in. */
	private static boolean overlapped(JdbcTemplate counts, DbLockMode mode) {
		List<int[]> row = counts.query("SELECT readers, writers FROM " + ReadWriteNode.HOLDERS_TABLE + " WHERE id = 1",
				(rs, i) -> new int[] { rs.getInt(1), rs.getInt(2) });
		int readers = row.get(0)[0];
		int writers = row.get(0)[1];
		return (mode == DbLockMode.WRITE) ? (readers != 0 || writers != 1) : writers != 0;
	}

}
