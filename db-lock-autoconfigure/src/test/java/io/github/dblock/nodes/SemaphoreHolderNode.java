package io.github.dblock.nodes;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A node of the semaphore mode's crash test, in one of two roles:
 * <ul>
 * <li>{@code hold}: takes one permit of a key ({@link DbLockTemplate#acquirePermit}) with a
 * short lease ({@link #LEASE}) renewed by its watchdog while the node lives, tells its test
 * so with a signal row (its token, written in autocommit on a pool of its own) and holds the
 * permit until it is killed;</li>
 * <li>{@code take}: takes every permit of the key at once, one thread per permit (waiting
 * {@link #TAKE_WAIT} for each), and, while all are held, reads the key's permit rows from
 * the lock table: prints, per permit {@code n}, {@code handleKey.n} and
 * {@code handleToken.n} (what the handles say) and {@code rowKey.n}, {@code rowToken.n},
 * {@code rowAcquiredMicros.n} (the row's {@code acquired_at} in microseconds), then
 * {@code rows=N}, and releases them.</li>
 * </ul>
 */
public final class SemaphoreHolderNode {

	/** The holder's lease, renewed while it lives. */
	static final Duration LEASE = Duration.ofSeconds(2);

	/** How long the taker waits for each permit: far longer than a dead holder's lease. */
	static final Duration TAKE_WAIT = Duration.ofSeconds(90);

	private SemaphoreHolderNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, role ({@code hold} or {@code take}), key,
	 * permits, the name of the signal row
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		String role = args[3];
		String key = args[4];
		int permits = Integer.parseInt(args[5]);
		String signal = args[6];
		if ("hold".equals(role)) {
			hold(args, key, permits, signal);
		}
		else {
			take(args, key, permits);
		}
	}

	private static void hold(String[] args, String key, int permits, String signal) throws InterruptedException {
		HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 4);
		HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], 1);
		LockEngine engine = NodeSupport.engine(dataSource);
		// the default lease, renewed while held
		DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(30), LEASE);
		LockHandle permit = template.acquirePermit(key, permits, null);
		new JdbcTemplate(side).update("INSERT INTO " + ModeNodes.SIGNAL_TABLE + " (name, signal_value) VALUES (?, ?)",
				signal, permit.fencingToken());
		System.out.println("permitKey=" + permit.key());
		System.out.println("token=" + permit.fencingToken());
		System.out.flush();
		new CountDownLatch(1).await();
	}

	private static void take(String[] args, String key, int permits) throws Exception {
		LockHandle[] handles = new LockHandle[permits];
		CountDownLatch allHeld = new CountDownLatch(permits);
		CountDownLatch read = new CountDownLatch(1);
		StringBuilder report = new StringBuilder();
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], permits + 2);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], 1);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			DbLockTemplate template = new DbLockTemplate(engine, "", TAKE_WAIT, Duration.ofSeconds(30));
			JdbcTemplate jdbc = new JdbcTemplate(side);
			Concurrently.run(permits, (thread) -> {
				try (LockHandle permit = template.acquirePermit(key, permits, TAKE_WAIT)) {
					handles[thread] = permit;
					allHeld.countDown();
					if (!allHeld.await(NodeSupport.SIGNAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
						throw new IllegalStateException("the permits were never held together");
					}
					if (thread == 0) {
						try {
							report(jdbc, key, handles, report);
						}
						finally {
							read.countDown();
						}
					}
					else if (!read.await(NodeSupport.SIGNAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
						throw new IllegalStateException("the permit rows were never read");
					}
				}
			});
		}
		System.out.print(report);
	}

	/** What the handles say and the database's view of the key's permits, all held. */
	private static void report(JdbcTemplate jdbc, String key, LockHandle[] handles, StringBuilder report) {
		for (int n = 0; n < handles.length; n++) {
			report.append("handleKey.").append(n).append('=').append(handles[n].key()).append('\n');
			report.append("handleToken.").append(n).append('=').append(handles[n].fencingToken()).append('\n');
		}
		List<Map<String, Object>> rows = jdbc.queryForList("SELECT lock_key, token FROM "
				+ TestDatabase.TABLE + " WHERE lock_key LIKE ? ORDER BY lock_key", key + "#permit-%");
		for (int n = 0; n < rows.size(); n++) {
			Map<String, Object> row = rows.get(n);
			report.append("rowKey.").append(n).append('=').append(row.get("lock_key")).append('\n');
			report.append("rowToken.").append(n).append('=').append(((Number) row.get("token")).longValue()).append('\n');
			report.append("rowAcquiredMicros.").append(n).append('=')
				.append(micros(jdbc.queryForObject("SELECT acquired_at FROM " + TestDatabase.TABLE + " WHERE lock_key = ?",
						Timestamp.class, row.get("lock_key"))))
				.append('\n');
		}
		report.append("rows=").append(rows.size()).append('\n');
	}

	/** A timestamp of the lock table in microseconds, as {@link NodeSupport#databaseMicros} counts them. */
	static long micros(Timestamp timestamp) {
		return timestamp.getTime() / 1000 * 1_000_000 + timestamp.getNanos() / 1000;
	}

}
