package io.github.dblock.nodes;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A node that takes a key in a mode, reads its fencing token, tells its test so with a
 * signal row (written in autocommit on a pool of its own, never in the lock's transaction)
 * and then holds the key until it is killed: the transaction mode inside a transaction that
 * never ends, the named and lease modes with a handle never closed.
 */
public final class ModeHolderNode {

	/** The lease of the lease mode, renewed while the node lives. */
	static final Duration LEASE = Duration.ofSeconds(5);

	private ModeHolderNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, mode, key, the name of the signal row
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		DbLockMode mode = DbLockMode.valueOf(args[3]);
		String key = args[4];
		String signal = args[5];
		HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 4);
		HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], 1);
		LockEngine engine = ModeNodes.engine(dataSource);
		DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(30), LEASE);
		JdbcTemplate signals = new JdbcTemplate(side);
		CountDownLatch never = new CountDownLatch(1);
		if (mode == DbLockMode.TRANSACTION) {
			new TransactionTemplate(new DataSourceTransactionManager(dataSource)).executeWithoutResult((status) -> {
				LockHandle lock = template.acquire(mode, key, null);
				hold(lock, signals, signal, never);
			});
		}
		else {
			hold(template.acquire(mode, key, null), signals, signal, never);
		}
	}

	private static void hold(LockHandle lock, JdbcTemplate signals, String signal, CountDownLatch never) {
		long token = lock.fencingToken();
		signals.update("INSERT INTO " + ModeNodes.SIGNAL_TABLE + " (name, signal_value) VALUES (?, ?)", signal, token);
		System.out.println("token=" + token);
		System.out.flush();
		try {
			never.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
