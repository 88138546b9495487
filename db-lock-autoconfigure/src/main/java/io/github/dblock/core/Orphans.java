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
 * every {@link #RETRY_MILLIS} while the database cannot be reached, until its lease would
 * have ended anyway. At most {@link #MAX_PENDING} wait; beyond that a row is left to expire.
 */
final class Orphans implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(Orphans.class);

	static final int MAX_PENDING = 10_000;

	static final long RETRY_MILLIS = 100;

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
				if (System.nanoTime() - orphan.expiresBy() > 0 || delete(orphan)) {
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

	/** Whether it is settled: deleted, or found not written. */
	private boolean delete(Orphan orphan) {
		try {
			if (this.repository.abandon(orphan.key(), orphan.owner())) {
				logger.warn("Deleted the row of lock '" + orphan.key() + "' that a failed attempt (owner "
						+ orphan.owner() + ") had written");
			}
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

	private record Orphan(String key, String owner, long expiresBy) {
	}

}
