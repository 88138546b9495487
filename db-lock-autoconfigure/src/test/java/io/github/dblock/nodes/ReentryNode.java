package io.github.dblock.nodes;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.DatabaseClock;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One of two nodes that play out a re-entry into an expired lease, step by step through a
 * signal row ({@code db_lock_test_step.step}):
 * <ol>
 * <li>A takes the key with a fixed lease of 300 ms, keeps the handle open, and signals 1.</li>
 * <li>B takes the key once that lease has ended (a wait of a few seconds), signals 2, and
 * holds it about a second.</li>
 * <li>A re-enters the key on the same thread with a wait of 5 s, closes its outer handle
 * first, and signals 3.</li>
 * <li>B tries the key with a zero wait while A's inner handle is open, and signals 4; A
 * then closes the inner handle.</li>
 * </ol>
 * A prints {@code outerToken}, {@code outerExpiresAt}, {@code outerHeldAfterB},
 * {@code outerLost}, {@code innerToken} (-1 if the re-entry timed out) and
 * {@code innerHeldAfterOuterClosed}; B prints {@code token}, {@code acquiredAt} (the
 * database's time after its acquisition returned) and {@code refusedWhileInnerOpen}.
 */
public final class ReentryNode {

	private static final String STEP = "SELECT step FROM db_lock_test_step WHERE id = 1";

	private ReentryNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, role ({@code A} or {@code B}), key
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		String key = args[4];
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 4);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(5), Duration.ofSeconds(30));
			if (args[3].equals("A")) {
				playA(template, jdbc, key);
			}
			else {
				playB(template, jdbc, key, SqlDialects.detect(dataSource, TestDatabase.TABLE));
			}
		}
	}

	private static void playA(DbLockTemplate template, JdbcTemplate jdbc, String key) {
		LockHandle outer = template.acquire(key, Duration.ofSeconds(5), Duration.ofMillis(300));
		System.out.println("outerToken=" + outer.fencingToken());
		System.out.println("outerExpiresAt=" + outer.expiresAt());
		signal(jdbc, 1);
		NodeSupport.awaitSignal(jdbc, STEP, 2);
		System.out.println("outerHeldAfterB=" + outer.isHeld());
		System.out.println("outerLost=" + outer.lostSince().isPresent());
		LockHandle inner;
		try {
			inner = template.acquire(key, Duration.ofSeconds(5), null);
		}
		catch (LockAcquisitionException ex) {
			System.out.println("innerToken=-1");
			outer.close();
			signal(jdbc, 3);
			NodeSupport.awaitSignal(jdbc, STEP, 4);
			return;
		}
		System.out.println("innerToken=" + inner.fencingToken());
		// out of order: the outer, stale handle first; it must not end the inner one's lease
		outer.close();
		System.out.println("innerHeldAfterOuterClosed=" + inner.isHeld());
		signal(jdbc, 3);
		NodeSupport.awaitSignal(jdbc, STEP, 4);
		inner.close();
	}

	private static void playB(DbLockTemplate template, JdbcTemplate jdbc, String key, SqlDialect dialect) {
		NodeSupport.awaitSignal(jdbc, STEP, 1);
		try (LockHandle lock = template.acquire(key, Duration.ofSeconds(5), null)) {
			System.out.println("acquiredAt=" + DatabaseClock.now(jdbc, dialect));
			System.out.println("token=" + lock.fencingToken());
			signal(jdbc, 2);
			// B's hold time, during which A re-enters and has to wait
			LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
		}
		NodeSupport.awaitSignal(jdbc, STEP, 3);
		Optional<LockHandle> tried = template.tryAcquire(key, null);
		System.out.println("refusedWhileInnerOpen=" + tried.isEmpty());
		tried.ifPresent(LockHandle::close);
		signal(jdbc, 4);
	}

	private static void signal(JdbcTemplate jdbc, int step) {
		jdbc.update("UPDATE db_lock_test_step SET step = ? WHERE id = 1", step);
	}

}
