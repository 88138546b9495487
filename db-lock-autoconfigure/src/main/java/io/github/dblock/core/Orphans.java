package io.github.dblock.core;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.jdbc.LockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Rows that failed attempts may have written: an attempt that failed without knowing
 * whether the database committed it (a timeout, a reset connection, a lost reply) may have
 * left a row that blocks the key for its whole lease. Each is deleted by its owner id, which
 * no other attempt has, on a thread of its own and off the caller's path, and tried again
 * every {@link #RETRY_MILLIS} while the database cannot be reached. A delete that found
 * nothing does not settle it: the abandoned statement may still be running in the server
 * (on PostgreSQL, which runs it to its end after its client has gone, e.g. behind a
 * holder's stalled commit) and commit later; the delete is repeated at intervals that
 * double from {@link #RETRY_MILLIS} up to {@link #MAX_RECHECK_MILLIS}. An orphan is settled
 * when a delete found its row (the attempt's one statement has landed), or when its lease
 * would have ended anyway (the row's expiry is the statement's start plus the lease, which
 * is before that). At most {@link #MAX_PENDING} wait; beyond that a row is left to expire.
 */
final class Orphans implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(Orphans.class);

	static final int MAX_PENDING = 10_000;

	static final long RETRY_MILLIS = 100;

	static final long MAX_RECHECK_MILLIS = 1000;

	private final LockRepository repository;

	private final ConcurrentLinkedQueue<Orphan> pending = new ConcurrentLinkedQueue<>();

	private final AtomicInteger size = new AtomicInteger();

	private final AtomicBoolean scheduled = new AtomicBoolean();

	private final ScheduledThreadPoolExecutor executor;

	Orphans(LockRepository repository) {
		this.repository = repository;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("db-lock-orphans-");
		threads.setDaemon(true);
		this.executor = new ScheduledThreadPoolExecutor(1, threads);
	}

	/**
	 * Deletes, soon and off this thread, the row an attempt may have written.
	 * @param key the key
	 * @param owner the attempt's owner id
	 * @param lease the lease it asked for: after it, the row would have expired anyway
	 */
	void abandon(String key, String owner, Duration lease) {
		if (this.size.incrementAndGet() > MAX_PENDING) {
			this.size.decrementAndGet();
			logger.warn("Too many rows of failed attempts to delete; the one of lock '" + key + "' (owner " + owner
					+ ") is left to expire");
			return;
		}
		this.pending.add(new Orphan(key, owner, System.nanoTime() + lease.toNanos()));
		schedule(0);
	}

	private void schedule(long delayMillis) {
		if (this.scheduled.compareAndSet(false, true) && !this.executor.isShutdown()) {
			this.executor.schedule(this::deleteAll, delayMillis, TimeUnit.MILLISECONDS);
		}
	}

	private void deleteAll() {
		this.scheduled.set(false);
		try {
			for (Iterator<Orphan> orphans = this.pending.iterator(); orphans.hasNext();) {
				Orphan orphan = orphans.next();
				long now = System.nanoTime();
				if (now - orphan.expiresBy > 0 || (now - orphan.nextTry >= 0 && delete(orphan, now))) {
					orphans.remove();
					this.size.decrementAndGet();
				}
			}
		}
		catch (Throwable ex) {
			logger.error("Could not delete the rows of failed attempts; trying again", ex);
		}
		if (!this.pending.isEmpty()) {
			schedule(RETRY_MILLIS);
		}
	}

	/** Whether it is settled: its row found and deleted. */
	private boolean delete(Orphan orphan, long now) {
		try {
			if (this.repository.abandon(orphan.key, orphan.owner)) {
				logger.warn("Deleted the row of lock '" + orphan.key + "' that a failed attempt (owner " + orphan.owner
						+ ") had written");
				return true;
			}
			// not there yet: its statement may still commit
			orphan.recheckMillis = Math.min(orphan.recheckMillis * 2, MAX_RECHECK_MILLIS);
			orphan.nextTry = now + TimeUnit.MILLISECONDS.toNanos(orphan.recheckMillis);
			return false;
		}
		catch (RuntimeException ex) {
			orphan.nextTry = now + TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS);
			return false;
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

	/** A row an attempt may have written; its times are read and written on the deleting thread only. */
	private static final class Orphan {

		final String key;

		final String owner;

		final long expiresBy;

		long nextTry = System.nanoTime();

		long recheckMillis = RETRY_MILLIS / 2;

		Orphan(String key, String owner, long expiresBy) {
			this.key = key;
			this.owner = owner;
			this.expiresBy = expiresBy;
		}

	}

}
