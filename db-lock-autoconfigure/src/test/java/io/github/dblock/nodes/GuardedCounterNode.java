package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.autoconfigure.DbLockCommitGuard;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.CommitGuard;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A node whose commit the test stalls: under a lock with a 2 s lease, in one transaction, it
 * reads a counter, writes it back incremented (no token column) and logs the write; it
 * signals, waits until the test has stalled its traffic (a file appears), then commits, with
 * the commit guard or without it. Prints {@code committed}, {@code failure} (the commit's
 * exception class, or {@code none}) and {@code lostReported}.
 */
public final class GuardedCounterNode {

	static final Duration LEASE = Duration.ofSeconds(2);

	static final String KEY = "guarded-counter";

	private GuardedCounterNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL (through the proxy), user, password, whether commits are guarded,
	 * the file whose appearance lets it commit
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(args[0]);
		config.setUsername(args[1]);
		config.setPassword(args[2]);
		config.setMaximumPoolSize(4);
		config.setConnectionTimeout(1000);
		boolean guarded = Boolean.parseBoolean(args[3]);
		Path go = Path.of(args[4]);
		try (HikariDataSource dataSource = new HikariDataSource(config)) {
			JdbcLockRepository repository = new JdbcLockRepository(dataSource,
					SqlDialects.detect(dataSource, TestDatabase.TABLE), Duration.ofSeconds(1));
			try (LockEngine engine = new LockEngine(repository,
					LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))))) {
				DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
				if (guarded) {
					new DbLockCommitGuard(new CommitGuard(repository.connections()), dataSource, new DefaultListableBeanFactory())
						.addTo(transactions);
				}
				JdbcTemplate jdbc = new JdbcTemplate(dataSource);
				LockHandle handle = engine.acquire(new LockRequest(KEY, Duration.ofSeconds(10), LEASE, true, Duration.ZERO));
				String failure = "none";
				try {
					new TransactionTemplate(transactions).executeWithoutResult((status) -> {
						long value = jdbc.queryForObject("SELECT counter_value FROM db_lock_test_guard_stall_counter WHERE id = 1",
								Long.class);
						jdbc.update("UPDATE db_lock_test_guard_stall_counter SET counter_value = ? WHERE id = 1", value + 1);
						jdbc.update("INSERT INTO db_lock_test_guard_stall_log (writer) VALUES ('stalled')");
						signal(dataSource);
						awaitFile(go);
					});
				}
				catch (RuntimeException ex) {
					failure = ex.getClass().getName();
				}
				boolean lostReported = handle.lostSince().isPresent();
				try {
					handle.close();
				}
				catch (RuntimeException ex) {
					// its row is another owner's by now
				}
				System.out.println("committed=" + failure.equals("none"));
				System.out.println("failure=" + failure);
				System.out.println("lostReported=" + lostReported);
			}
		}
	}

	/** Signals on a connection of its own, outside the transaction. */
	private static void signal(HikariDataSource dataSource) {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			connection.setAutoCommit(true);
			statement.executeUpdate("UPDATE db_lock_test_guard_stall_signal SET phase = 1");
		}
		catch (java.sql.SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void awaitFile(Path go) {
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
		while (!Files.exists(go)) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("the test never let the node commit");
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

}
