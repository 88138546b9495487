package io.github.dblock.app;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.DbLock;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A read-modify-write counter in the database, correct only under mutual exclusion.
 * Overlaps are counted across every application context of the JVM.
 */
public class CounterService {

	/** Callers inside a locked section right now, across contexts. */
	public static final AtomicInteger inside = new AtomicInteger();

	/** Times a caller entered while another was inside. */
	public static final AtomicInteger overlaps = new AtomicInteger();

	private final JdbcTemplate jdbc;

	public CounterService(JdbcTemplate jdbc) {
		this.jdbc = jdbc;
	}

	@DbLock(name = "counter", key = "#id", waitMs = 120_000)
	public void increment(int id) {
		readModifyWrite(id);
	}

	@DbLock(name = "counter", key = "#id", waitMs = 120_000)
	@Transactional
	public void incrementInTransaction(int id, Runnable afterCommit) {
		readModifyWrite(id);
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
			@Override
			public void afterCommit() {
				afterCommit.run();
			}
		});
	}

	@DbLock(name = "order", key = "#orderId")
	public void hold(long orderId, CountDownLatch entered, CountDownLatch release) throws InterruptedException {
		entered.countDown();
		release.await(1, TimeUnit.MINUTES);
	}

	@DbLock(name = "order", key = "#orderId")
	public void run(long orderId, Runnable action) {
		action.run();
	}

	@DbLock(name = "report", waitMs = 0)
	public void failFast() {
	}

	@DbLock(name = "report", waitMs = 500)
	public void waitHalfASecond() {
	}

	@DbLock
	public void nameOnly(Runnable action) {
		action.run();
	}

	private void readModifyWrite(int id) {
		if (inside.incrementAndGet() > 1) {
			overlaps.incrementAndGet();
		}
		try {
			long value = this.jdbc.queryForObject("SELECT counter_value FROM db_lock_test_counter WHERE id = ?", Long.class,
					id);
			Thread.yield();
			this.jdbc.update("UPDATE db_lock_test_counter SET counter_value = ? WHERE id = ?", value + 1, id);
		}
		finally {
			inside.decrementAndGet();
		}
	}

}
