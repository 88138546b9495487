package io.github.dblock.nodes;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.LockRequest;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node on a hot key in a mode (lease, fair or named): threads that take one key with a
 * wait (5 s unless told), hold it 1 ms and release it, again and again, from a start time shared with the
 * other nodes. Each hold writes its fencing token where a smaller one is stored, so that a
 * holder acting after a newer one is seen. Prints {@code acquired}, {@code timeouts},
 * {@code heldNanos}, {@code maxWaitMillis}, {@code fenceViolations} and {@code tokens} (the
 * fencing tokens of its holds, comma-separated, in no particular order).
 */
public final class FairHotKeyNode {

	private FairHotKeyNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, mode, key, threads, start (epoch milliseconds),
	 * duration in milliseconds, and optionally the wait in milliseconds
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		DbLockMode mode = DbLockMode.valueOf(args[3]);
		String key = args[4];
		int threads = Integer.parseInt(args[5]);
		long start = Long.parseLong(args[6]);
		long durationNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[7]));
		AtomicInteger acquired = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		AtomicInteger fenceViolations = new AtomicInteger();
		AtomicLong heldNanos = new AtomicLong();
		AtomicLong maxWaitNanos = new AtomicLong();
		Queue<Long> tokens = new ConcurrentLinkedQueue<>();
		Duration wait = Duration.ofMillis((args.length > 8) ? Long.parseLong(args[8]) : 5000);
		LockRequest request = new LockRequest(key, wait, Duration.ofSeconds(30), true, Duration.ZERO, mode);
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], threads + 2);
				LockEngine engine = ModeNodes.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			NodeSupport.awaitStart(start);
			long end = System.nanoTime() + durationNanos;
			Concurrently.run(threads, (thread) -> {
				while (System.nanoTime() - end < 0) {
					long asked = System.nanoTime();
					try (LockHandle lock = engine.acquire(request)) {
						long from = System.nanoTime();
						maxWaitNanos.accumulateAndGet(from - asked, Math::max);
						if (jdbc.update("UPDATE db_lock_test_fence SET token = ? WHERE id = 1 AND token < ?",
								lock.fencingToken(), lock.fencingToken()) != 1) {
							fenceViolations.incrementAndGet();
						}
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
						heldNanos.addAndGet(System.nanoTime() - from);
						acquired.incrementAndGet();
						tokens.add(lock.fencingToken());
					}
					catch (LockAcquisitionException ex) {
						timeouts.incrementAndGet();
					}
				}
			});
		}
		System.out.println("acquired=" + acquired);
		System.out.println("timeouts=" + timeouts);
		System.out.println("heldNanos=" + heldNanos);
		System.out.println("maxWaitMillis=" + TimeUnit.NANOSECONDS.toMillis(maxWaitNanos.get()));
		System.out.println("fenceViolations=" + fenceViolations);
		System.out.println("tokens=" + tokens.stream().map(String::valueOf).collect(Collectors.joining(",")));
	}

}
