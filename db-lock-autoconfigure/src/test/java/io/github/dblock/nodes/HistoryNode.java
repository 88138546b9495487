package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.maintenance.LockHistory;
import io.github.dblock.jdbc.JdbcLockHistoryRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A node with the lock log on: takes and releases a shared key a number of times, then
 * takes a key of its own (renewed by its watchdog), makes sure the log has that hold's row,
 * tells its test with a signal row, and holds the key until it is killed.
 */
public final class HistoryNode {

	/** The lease of the held key, renewed while the node lives. */
	static final Duration LEASE = Duration.ofSeconds(3);

	private HistoryNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, the shared key, the cycles on it, the key to
	 * hold, the name of the signal row
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		String shared = args[3];
		int cycles = Integer.parseInt(args[4]);
		String held = args[5];
		String signal = args[6];
		HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 4);
		LockEngine engine = ModeNodes.engine(dataSource);
		LockHistory history = new LockHistory(new JdbcLockHistoryRepository(
				new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE)).connections()),
				Duration.ofMillis(50), engine.scheduler());
		engine.addListener(history);
		history.start();
		DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(60), LEASE);
		for (int i = 0; i < cycles; i++) {
			template.acquire(shared, null, null).close();
		}
		LockHandle lock = template.acquire(held, null, null);
		history.flush();
		new JdbcTemplate(dataSource).update(
				"INSERT INTO " + ModeNodes.SIGNAL_TABLE + " (name, signal_value) VALUES (?, ?)", signal, lock.fencingToken());
		System.out.println("token=" + lock.fencingToken());
		System.out.flush();
		new CountDownLatch(1).await();
	}

}
