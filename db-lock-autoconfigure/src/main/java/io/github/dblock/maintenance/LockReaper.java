package io.github.dblock.maintenance;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.dblock.engine.LockListener;
import io.github.dblock.engine.LockScheduler;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Deletes rows whose lease has ended, in batches, so that the tables stay small however
 * many distinct keys come and go: the lock table, and where the repository has them, the
 * read/write modes' tables and the fair mode's queue. Each statement deletes only rows
 * still expired when it runs, so several nodes reaping at once is harmless. Runs every
 * interval while started ({@link org.springframework.context.SmartLifecycle}), on the
 * engine's {@link LockScheduler}; a run that fails is logged and the next one tries again.
 *
 * @since 0.1.0
 */
public final class LockReaper extends PeriodicJob {

	private static final Log logger = LogFactory.getLog(LockReaper.class);

	private final LockRepository repository;

	private final int batchSize;

	private final List<LockListener> listeners = new CopyOnWriteArrayList<>();

	/**
	 * Creates a reaper; nothing runs until {@link #start()} or {@link #reap()}.
	 * @param repository where leases are kept
	 * @param batchSize the most rows one statement deletes
	 * @param interval the time between the end of a run and the start of the next
	 * @param scheduler where the runs take place: the engine's
	 */
	public LockReaper(LockRepository repository, int batchSize, Duration interval, LockScheduler scheduler) {
		super(scheduler, "reaper", interval, true);
		if (batchSize < 1) {
			throw new IllegalArgumentException("Reaper batch size must be positive, got " + batchSize);
		}
		this.repository = repository;
		this.batchSize = batchSize;
	}

	/**
	 * Adds a listener, told of each run that deleted rows ({@link LockListener#reaped(int)});
	 * what it throws is logged.
	 * @param listener the listener
	 */
	public void addListener(LockListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Deletes every expired row, one batch after another, on the calling thread.
	 * @return the number of rows deleted
	 * @throws org.springframework.dao.DataAccessException if the database failed
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
		FairLockRepository fair = this.repository.fairQueue().orElse(null);
		if (fair != null) {
			do {
				deleted = fair.deleteExpired(this.batchSize);
				total += deleted;
			}
			while (deleted == this.batchSize);
		}
		if (total > 0) {
			reaped(total);
		}
		return total;
	}

	private void reaped(int rows) {
		for (LockListener listener : this.listeners) {
			try {
				listener.reaped(rows);
			}
			catch (RuntimeException | LinkageError ex) {
				logger.warn("Lock listener " + listener + " failed; the reaper goes on", ex);
			}
		}
	}

	@Override
	void runLogged() {
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

}
