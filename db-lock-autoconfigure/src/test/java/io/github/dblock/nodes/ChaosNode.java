package io.github.dblock.nodes;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One node of the randomized safety checker: threads that acquire, try, re-enter, hold
 * with renewal, hold fixed leases and sleep past them, on a handful of keys, and write
 * every hold and every refusal to a history file with the database's time (microseconds):
 * <ul>
 * <li>{@code H,node,thread,key,token,beforeAcquire,acquired,beforeClose,afterClose,valid,reentry,lost}:
 * {@code valid} is {@code isHeld()} read after {@code beforeClose}; {@code reentry} that
 * the handle shares its token with an outer handle of the thread; {@code lost} that
 * {@code lostSince()} was set after the close.</li>
 * <li>{@code R,node,thread,key,before,after}: a zero-wait try that was refused.</li>
 * <li>{@code W,node,thread,key,before,after}: a wait that ran out.</li>
 * </ul>
 */
public final class ChaosNode {

	private static final int THREADS = 4;

	private static final int KEYS = 3;

	private ChaosNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, node number, start (epoch milliseconds),
	 * duration in milliseconds, history file
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		int node = Integer.parseInt(args[3]);
		long start = Long.parseLong(args[4]);
		long durationNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[5]));
		Path history = Path.of(args[6]);
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 2 * THREADS + 2);
				LockEngine engine = NodeSupport.engine(dataSource);
				PrintWriter out = new PrintWriter(Files.newBufferedWriter(history, StandardCharsets.UTF_8))) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			SqlDialect dialect = SqlDialects.detect(dataSource, TestDatabase.TABLE);
			// renewed leases of 900 ms: the watchdog renews them every 300 ms
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(2), Duration.ofMillis(900));
			NodeSupport.awaitStart(start);
			long end = System.nanoTime() + durationNanos;
			Concurrently.run(THREADS, (thread) -> {
				Actor actor = new Actor(node, thread, template, jdbc, dialect, out, new Random(31L * node + thread));
				while (System.nanoTime() - end < 0) {
					actor.step();
				}
			});
		}
		System.out.println("done=true");
	}

	/** One thread's random operations and their history. */
	private static final class Actor {

		private final int node;

		private final int thread;

		private final DbLockTemplate template;

		private final JdbcTemplate jdbc;

		private final SqlDialect dialect;

		private final PrintWriter out;

		private final Random random;

		/** The tokens of this thread's open handles, innermost first. */
		private final java.util.ArrayDeque<Long> open = new java.util.ArrayDeque<>();

		Actor(int node, int thread, DbLockTemplate template, JdbcTemplate jdbc, SqlDialect dialect, PrintWriter out,
				Random random) {
			this.node = node;
			this.thread = thread;
			this.template = template;
			this.jdbc = jdbc;
			this.dialect = dialect;
			this.out = out;
			this.random = random;
		}

		void step() {
			String key = "chaos-" + this.random.nextInt(KEYS);
			int dice = this.random.nextInt(10);
			if (dice < 4) {
				hold(key, null, () -> {
					pause(this.random.nextInt(5));
					if (this.random.nextInt(3) == 0) {
						// re-enter while held
						hold(key, null, () -> pause(this.random.nextInt(3)));
					}
				});
			}
			else if (dice < 6) {
				long before = now();
				Optional<LockHandle> tried = this.template.tryAcquire(key, null);
				if (tried.isEmpty()) {
					write("R", key, before, now());
				}
				else {
					record(key, tried.get(), before, () -> pause(this.random.nextInt(3)));
				}
			}
			else if (dice < 8) {
				Duration lease = Duration.ofMillis(200 + this.random.nextInt(200));
				hold(key, lease, () -> {
					if (this.random.nextInt(3) == 0) {
						// past the fixed lease, then again: a fresh acquisition, never the stale lease
						pause(lease.toMillis() + 100);
						hold(key, Duration.ofSeconds(1), () -> pause(this.random.nextInt(5)));
					}
					else {
						pause(this.random.nextInt(5));
					}
				});
			}
			else {
				// longer than the renewed lease: renewed by the watchdog meanwhile
				hold(key, null, () -> pause(300 + this.random.nextInt(700)));
			}
		}

		/** Acquires with a wait, runs the work, closes. */
		private void hold(String key, Duration lease, Runnable work) {
			long before = now();
			LockHandle handle;
			try {
				handle = this.template.acquire(key, null, lease);
			}
			catch (LockAcquisitionException ex) {
				write("W", key, before, now());
				return;
			}
			record(key, handle, before, work);
		}

		private void record(String key, LockHandle handle, long before, Runnable work) {
			long acquired = now();
			boolean reentry = this.open.contains(handle.fencingToken());
			this.open.push(handle.fencingToken());
			try {
				work.run();
			}
			finally {
				this.open.pop();
			}
			long beforeClose = now();
			boolean valid = handle.isHeld();
			handle.close();
			long afterClose = now();
			boolean lost = handle.lostSince().isPresent();
			synchronized (this.out) {
				this.out.println(String.join(",", "H", String.valueOf(this.node), String.valueOf(this.thread), key,
						String.valueOf(handle.fencingToken()), String.valueOf(before), String.valueOf(acquired),
						String.valueOf(beforeClose), String.valueOf(afterClose), String.valueOf(valid),
						String.valueOf(reentry), String.valueOf(lost)));
			}
		}


		private void write(String kind, String key, long before, long after) {
			synchronized (this.out) {
				this.out.println(String.join(",", kind, String.valueOf(this.node), String.valueOf(this.thread), key,
						String.valueOf(before), String.valueOf(after)));
			}
		}

		private long now() {
			return NodeSupport.databaseMicros(this.jdbc, this.dialect);
		}

		private static void pause(long millis) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(millis));
		}

	}

}
