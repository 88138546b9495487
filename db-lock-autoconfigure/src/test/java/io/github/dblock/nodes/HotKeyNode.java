package io.github.dblock.nodes;

import java.time.Duration;
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
import io.github.dblock.engine.LockListener;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.CountingLockRepository;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node on a hot key: threads that take one key with a wait of 5 s, hold it 1 ms and
 * release it, again and again, from a start time shared with the other nodes. Each hold
 * writes its fencing token where a smaller one is stored, so that a holder acting after a
 * newer one is seen, and counts itself in a shared row while it holds, so that two
 * holders at once are seen. Optionally its leases are renewed leases of a given length,
 * and every cede of it that commits loses its reply (a fault). Prints {@code acquired},
 * {@code timeouts}, {@code heldNanos}, {@code fenceViolations}, {@code overlaps},
 * {@code lost} (leases found lost) and {@code lostCedeReplies}.
 */
public final class HotKeyNode {

	private HotKeyNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, threads, start (epoch milliseconds), duration
	 * in milliseconds; optionally a renewed lease in milliseconds (0 for the template's
	 * default), {@code lose-ceded-replies} or {@code none}, and a pause in milliseconds
	 * between a thread's holds
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[3]);
		long start = Long.parseLong(args[4]);
		long durationNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[5]));
		AtomicInteger acquired = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		AtomicInteger fenceViolations = new AtomicInteger();
		AtomicLong heldNanos = new AtomicLong();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger lost = new AtomicInteger();
		Duration lease = (args.length > 6 && !args[6].equals("0")) ? Duration.ofMillis(Long.parseLong(args[6])) : null;
		boolean loseCededReplies = args.length > 7 && args[7].equals("lose-ceded-replies");
		long pauseNanos = (args.length > 8) ? TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[8])) : 0;
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], threads + 2)) {
			CountingLockRepository repository = new CountingLockRepository(NodeSupport.repository(dataSource));
			if (loseCededReplies) {
				repository.loseCededReplies();
			}
			LockEngine engine = NodeSupport.engine(repository);
			engine.addListener(new LockListener() {
				@Override
				public void lost(String key, DbLockMode mode) {
					lost.incrementAndGet();
				}
			});
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			// the template's default lease is renewed
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(5),
					(lease != null) ? lease : Duration.ofSeconds(30));
			NodeSupport.awaitStart(start);
			long end = System.nanoTime() + durationNanos;
			Concurrently.run(threads, (thread) -> {
				while (System.nanoTime() - end < 0) {
					try (LockHandle lock = template.acquire("hot", null, null)) {
						long from = System.nanoTime();
						jdbc.update("UPDATE db_lock_test_process_counter SET holders = holders + 1 WHERE id = 1");
						if (jdbc.queryForObject("SELECT holders FROM db_lock_test_process_counter WHERE id = 1",
								Integer.class) != 1) {
							overlaps.incrementAndGet();
						}
						if (jdbc.update("UPDATE db_lock_test_fence SET token = ? WHERE id = 1 AND token < ?",
								lock.fencingToken(), lock.fencingToken()) != 1) {
							fenceViolations.incrementAndGet();
						}
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
						jdbc.update("UPDATE db_lock_test_process_counter SET holders = holders - 1 WHERE id = 1");
						heldNanos.addAndGet(System.nanoTime() - from);
						acquired.incrementAndGet();
					}
					catch (LockAcquisitionException ex) {
						timeouts.incrementAndGet();
					}
					if (pauseNanos > 0) {
						LockSupport.parkNanos(pauseNanos);
					}
				}
			});
			engine.close();
			System.out.println("lostCedeReplies=" + repository.lostCedeReplies());
		}
		System.out.println("acquired=" + acquired);
		System.out.println("timeouts=" + timeouts);
		System.out.println("heldNanos=" + heldNanos);
		System.out.println("fenceViolations=" + fenceViolations);
		System.out.println("overlaps=" + overlaps);
		System.out.println("lost=" + lost);
	}

}
