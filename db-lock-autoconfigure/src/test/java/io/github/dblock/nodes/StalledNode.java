package io.github.dblock.nodes;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A node whose traffic the test stalls while it holds a lock: it takes the key, writes once
 * with its fencing token, signals, then waits until its handle says it no longer holds the
 * key (its renewals cannot get through), and, once the traffic flows again, tries to write
 * with the same token. Prints {@code firstAccepted}, {@code heldAfterStall},
 * {@code lostReported} and {@code staleWriteAccepted}.
 */
public final class StalledNode {

	static final Duration LEASE = Duration.ofSeconds(2);

	private StalledNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL (through the proxy), user, password
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(args[0]);
		config.setUsername(args[1]);
		config.setPassword(args[2]);
		config.setMaximumPoolSize(4);
		config.setConnectionTimeout(1000);
		try (HikariDataSource dataSource = new HikariDataSource(config);
				LockEngine engine = new LockEngine(new JdbcLockRepository(dataSource,
						SqlDialects.detect(dataSource, TestDatabase.TABLE), Duration.ofSeconds(1)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
			LockHandle handle = engine.acquire(new LockRequest("stalled", Duration.ofSeconds(10), LEASE, true, Duration.ZERO));
			boolean first = fencedWrite(transaction, jdbc, handle.fencingToken());
			jdbc.update("UPDATE stall_signal SET phase = 1");
			// the test stalls this node's traffic now: the lease can no longer be renewed
			long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
			while (handle.isHeld() && System.nanoTime() - deadline < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			boolean heldAfterStall = handle.isHeld();
			boolean lostReported = handle.lostSince().isPresent();
			// blocks while stalled; the test lets the traffic through once another node has written
			NodeSupport.awaitSignal(jdbc, "SELECT phase FROM stall_signal", 2);
			boolean stale = fencedWrite(transaction, jdbc, handle.fencingToken());
			handle.close();
			System.out.println("firstAccepted=" + first);
			System.out.println("heldAfterStall=" + heldAfterStall);
			System.out.println("lostReported=" + lostReported);
			System.out.println("staleWriteAccepted=" + stale);
		}
	}

	/** Writes if no larger token has: read with {@code FOR UPDATE}, written in one transaction. */
	static boolean fencedWrite(TransactionTemplate transaction, JdbcTemplate jdbc, long token) {
		return Boolean.TRUE.equals(transaction.execute((status) -> {
			Map<String, Object> row = jdbc
				.queryForMap("SELECT counter_value, fence FROM stall_counter WHERE id = 1 FOR UPDATE");
			if (((Number) row.get("fence")).longValue() >= token) {
				return false;
			}
			jdbc.update("UPDATE stall_counter SET counter_value = ?, fence = ? WHERE id = 1",
					((Number) row.get("counter_value")).longValue() + 1, token);
			jdbc.update("INSERT INTO stall_log (token) VALUES (?)", token);
			return true;
		}));
	}

}
