package io.github.dblock.engine;

import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Deletes rows whose lease has ended, in batches, so that the lock table (and the
 * read/write modes' tables) stay small however many distinct keys come and go. Each statement deletes only rows still expired
 * when it runs, so several nodes reaping at once is harmless.
 */
public final class LockReaper implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LockReaper.class);

	private final LockRepository repository;

	private final int batchSize;

	private final ScheduledThreadPoolExecutor scheduler;

	private final Events events = new Events();

	/**
	 * Creates a reaper; nothing runs until {@link #start(Duration)}.
	 * @param repository where leases are kept
	 * @param batchSize the most rows one statement deletes
	 */
	public LockReaper(LockRepository repository, int batchSize) {
		if (batchSize < 1) {
			throw new IllegalArgumentException("Reaper batch size must be positive, got " + batchSize);
		}
		this.repository = repository;
		this.batchSize = batchSize;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("db-lock-reaper-");
		threads.setDaemon(true);
		this.scheduler = new ScheduledThreadPoolExecutor(1, threads);
	}

	/**
	 * Adds a listener, told of each run that deleted rows ({@link LockListener#reaped(int)}).
	 * @param listener the listener
	 */
	public void addListener(LockListener listener) {
		this.events.add(listener);
	}

	/**
	 * Reaps every {@code interval}, the first time after one interval.
	 * @param interval the time between runs
	 */
	public void start(Duration interval) {
		long nanos = interval.toNanos();
		this.scheduler.scheduleWithFixedDelay(this::reapLogged, nanos, nanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Deletes every expired row, one batch after another.
	 * @return the number of rows deleted
	 */
	public int reap() {
		int total = 0;
		int deleted;
		do {
			deleted = this.repository.deleteExpired(this.batchSize);
			total += deleted;
		}
		while (deleted == this.batchSize);
		ReadWriteLockRepository readWrite = this.repository.readWriteLocks().orElse(null);
		if (readWrite != null) {
			// the read/write modes' holder rows and intents: two statements, each its own batch
			do {
				deleted = readWrite.deleteExpired(this.batchSize);
				total += deleted;
			}
			while (deleted >= this.batchSize);
		}
		if (total > 0) {
			this.events.reaped(total);
		}
		return total;
	}

	private void reapLogged() {
		try {
			int deleted = reap();
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Deleted " + deleted + " expired locks");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not delete expired locks; trying again at the next run", ex);
		}
	}

	@Override
	public void close() {
		this.scheduler.shutdownNow();
	}

}
