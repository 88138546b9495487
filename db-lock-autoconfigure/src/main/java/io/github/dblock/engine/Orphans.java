package io.github.dblock.engine;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Rows that failed attempts may have written: an attempt that failed without knowing
 * whether the database committed it (a timeout, a reset connection, a lost reply) may have
 * left a row that blocks the key for its whole lease. They are deleted by their owner ids,
 * which no other attempt has, on the engine's {@link LockScheduler} and off the caller's path, up to
 * {@link #BATCH} in one statement.
 * <p>
 * A delete that found nothing does not settle an orphan: the abandoned statement may still
 * be running in the server (PostgreSQL runs it to its end after its client has gone, e.g.
 * behind a holder's stalled commit) and commit later. So every orphan is deleted again, at
 * intervals that double from {@link #RETRY_MILLIS} up to {@link #MAX_RECHECK_MILLIS} since
 * the last orphan came (and every {@link #RETRY_MILLIS} while the database cannot be
 * reached), until a delete of it alone found its row (its attempt's statement has landed),
 * or until its lease would have ended anyway: the row's expiry is taken from the database's
 * clock when the statement ran, before the attempt failed, and the horizon is counted from
 * the failure. A row that lands is thus gone within {@link #MAX_RECHECK_MILLIS}, for one
 * statement a second while orphans wait, whatever their number. At most
 * {@link #MAX_PENDING} wait; beyond that a row is left to expire.
 */
final class Orphans implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(Orphans.class);

	static final int MAX_PENDING = 10_000;

	static final int BATCH = 100;

	static final long RETRY_MILLIS = 100;

	static final long MAX_RECHECK_MILLIS = 1000;

	private final String rows;

	private final ToIntFunction<Map<String, String>> deleteAll;

	private final ConcurrentLinkedQueue<Orphan> pending = new ConcurrentLinkedQueue<>();

	private final AtomicInteger size = new AtomicInteger();

	private final AtomicBoolean scheduled = new AtomicBoolean();

	/** Whether an orphan came since the current run began. */
	private volatile boolean fresh;

	/** The next recheck's interval; back to {@link #RETRY_MILLIS} when an orphan comes. */
	private volatile long recheckMillis = RETRY_MILLIS;

	private final LockScheduler.Tasks executor;

	/**
	 * Creates the orphans of one mode.
	 * @param rows what an attempt writes, for the log
	 * @param deleteAll deletes, in as few statements as it can, what the attempts of the
	 * given owner ids (keys by owner id) wrote, and returns how many rows it deleted
	 * @param scheduler where the deletes run
	 */
	Orphans(String rows, ToIntFunction<Map<String, String>> deleteAll, LockScheduler scheduler) {
		this.rows = rows;
		this.deleteAll = deleteAll;
		this.executor = scheduler.tasks("orphans");
	}

	/**
	 * Deletes, soon and off this thread, what an attempt may have written, and again until
	 * it is found or its lease would have ended.
	 * @param key the key
	 * @param owner the attempt's owner id
	 * @param lease the lease it asked for: after it, the row would have expired anyway
	 */
	void abandon(String key, String owner, Duration lease) {
		if (this.size.incrementAndGet() > MAX_PENDING) {
			this.size.decrementAndGet();
			logger.warn("Too many " + this.rows + " of failed attempts to delete; the one of lock '" + key + "' (owner "
					+ owner + ") is left to expire");
			return;
		}
		this.pending.add(new Orphan(key, owner, System.nanoTime() + lease.toNanos()));
		this.recheckMillis = RETRY_MILLIS;
		this.fresh = true;
		schedule(0);
	}

	/** How many wait to be settled. */
	int pending() {
		return this.size.get();
	}

	private void schedule(long delayMillis) {
		if (this.scheduled.compareAndSet(false, true) && !this.executor.isShutdown()) {
			this.executor.schedule(this::deleteAll, delayMillis, TimeUnit.MILLISECONDS);
		}
	}

	/** Runs one at a time: {@code scheduled} stays set until the run has ended. */
	private void deleteAll() {
		this.fresh = false;
		long next = this.recheckMillis;
		this.recheckMillis = Math.min(next * 2, MAX_RECHECK_MILLIS);
		try {
			Map<String, String> batch = new LinkedHashMap<>();
			for (Iterator<Orphan> orphans = this.pending.iterator(); orphans.hasNext();) {
				Orphan orphan = orphans.next();
				if (System.nanoTime() - orphan.expiresBy > 0) {
					settle(orphans);
					continue;
				}
				batch.put(orphan.owner, orphan.key);
				if (batch.size() == BATCH) {
					delete(batch, null);
					batch.clear();
				}
			}
			if (batch.size() == 1) {
				delete(batch, this.pending.iterator());
			}
			else if (!batch.isEmpty()) {
				delete(batch, null);
			}
		}
		catch (RuntimeException ex) {
			// tried again soon: the database may be back
			next = RETRY_MILLIS;
			logger.debug("Could not delete the " + this.rows + " of failed attempts; trying again", ex);
		}
		catch (Throwable ex) {
			next = RETRY_MILLIS;
			logger.error("Could not delete the " + this.rows + " of failed attempts; trying again", ex);
		}
		this.scheduled.set(false);
		if (this.fresh) {
			// abandoned during this run: deleted soon, not after the run's back-off
			next = 0;
		}
		if (!this.pending.isEmpty()) {
			schedule(next);
		}
	}

	/**
	 * Deletes a batch; a lone orphan whose row was found is settled.
	 * @param alone the pending orphans, when the batch holds one orphan
	 */
	private void delete(Map<String, String> batch, @Nullable Iterator<Orphan> alone) {
		int deleted = this.deleteAll.applyAsInt(batch);
		if (deleted > 0) {
			logger.warn("Deleted " + deleted + " " + this.rows + " that failed attempts had written (owners "
					+ batch.keySet() + ")");
		}
		if (deleted > 0 && alone != null) {
			String owner = batch.keySet().iterator().next();
			while (alone.hasNext()) {
				if (alone.next().owner.equals(owner)) {
					settle(alone);
					return;
				}
			}
		}
	}

	private void settle(Iterator<Orphan> orphans) {
		orphans.remove();
		this.size.decrementAndGet();
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

	/** What an attempt may have written, deleted by its owner id until its lease would have ended. */
	private record Orphan(String key, String owner, long expiresBy) {
	}

}
