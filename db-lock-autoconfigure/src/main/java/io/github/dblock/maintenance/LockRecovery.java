package io.github.dblock.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.dblock.LockChecks;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockHistoryRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The recovery job: a periodic task, run by one node at a time (it holds the lease
 * lock {@value #KEY} of its engine while it runs, and skips a run another node holds), that
 * <ul>
 * <li>frees the lease and read/write holds taken longer ago than a limit (by the database's clock),
 * and closes their log rows as {@code recovered}: a holder still running finds its lease
 * gone at its next renewal or release and reports it lost. A lease handed on among the
 * threads of one JVM counts from its current holder's start ({@code acquired_at}, written
 * by the extension of a hand-on, or by the first renewal after a hand-on without a
 * statement: at most one renewal interval late);</li>
 * <li>closes as {@code expired} the log rows of holds whose lease ran out before their
 * holder ended them (a crashed or stalled JVM);</li>
 * <li>deletes log rows older than the log's retention.</li>
 * </ul>
 * Beside the reaper, which deletes expired rows of the lock table: the reaper never frees a
 * live lease, this job frees only those held too long. Runs every interval while started
 * ({@link org.springframework.context.SmartLifecycle}), on the engine's
 * {@link io.github.dblock.engine.LockScheduler}; a run that fails is logged and the next
 * one tries again.
 *
 * @since 0.1.0
 */
public final class LockRecovery extends PeriodicJob {

	/** The key of the lock that makes one node at a time run the job. */
	public static final String KEY = "db-lock:recovery";

	/** The most holds freed, or log rows deleted, by one statement. */
	static final int BATCH = 500;

	/**
	 * How long after a hold began, at least, its log row may be closed as expired when its
	 * row in the lock table is gone: long past the flush interval in which a live holder
	 * writes its own end.
	 */
	static final Duration SETTLE = Duration.ofMinutes(1);

	private static final Log logger = LogFactory.getLog(LockRecovery.class);

	private final LockEngine engine;

	private final LockHistoryRepository repository;

	private final @Nullable Duration maxHold;

	private final @Nullable Duration retention;

	/** {@link #SETTLE}, shorter in tests. */
	Duration settle = SETTLE;

	/**
	 * Creates the job; nothing runs until {@link #start()} or {@link #run()}.
	 * @param engine the engine whose lease lock serializes the nodes' runs
	 * @param repository the lock log's storage, which also frees holds
	 * @param maxHold the longest a lease or read/write hold may last before it is freed, or
	 * {@code null} to free none
	 * @param retention how long the log keeps a row, or {@code null} if the log is off (its
	 * rows are then neither closed nor deleted)
	 * @param interval the time between the end of a run and the start of the next
	 */
	public LockRecovery(LockEngine engine, LockHistoryRepository repository, @Nullable Duration maxHold,
			@Nullable Duration retention, Duration interval) {
		super(engine.scheduler(), "recovery", interval, true);
		this.engine = engine;
		this.repository = repository;
		this.maxHold = maxHold;
		this.retention = retention;
	}

	/**
	 * Runs the job once, now, on the calling thread, unless another node runs it.
	 * @return what it did, or empty if another node held the job's lock
	 * @throws org.springframework.dao.DataAccessException if the database failed
	 */
	public Optional<Run> run() {
		Optional<LockHandle> turn = this.engine
			.tryAcquire(new LockRequest(KEY, Duration.ZERO, Duration.ofMinutes(1), true, Duration.ZERO));
		if (turn.isEmpty()) {
			return Optional.empty();
		}
		try (LockHandle held = turn.get()) {
			Instant now = Instant.now();
			int recovered = 0;
			if (this.maxHold != null) {
				List<Lease> freed;
				do {
					freed = this.repository.recover(this.maxHold, BATCH, now);
					for (Lease hold : freed) {
						logger.warn("Freed lock '" + hold.key() + "' (owner " + hold.owner() + ", token " + hold.token()
								+ "): held longer than db-lock.recovery.max-hold (" + LockChecks.format(this.maxHold) + ")");
					}
					recovered += freed.size();
				}
				while (freed.size() >= BATCH);
			}
			int expired = 0;
			int deleted = 0;
			if (this.retention != null) {
				expired = this.repository.closeExpired(now.minus(this.settle), now);
				int batch;
				do {
					batch = this.repository.deleteOlderThan(now.minus(this.retention), BATCH);
					deleted += batch;
				}
				while (batch == BATCH);
			}
			return Optional.of(new Run(recovered, expired, deleted));
		}
	}

	@Override
	void runLogged() {
		try {
			run().filter((run) -> run.expired() + run.deleted() > 0)
				.ifPresent((run) -> logger.debug("Lock recovery: " + run));
		}
		catch (RuntimeException ex) {
			logger.warn("The lock recovery job failed; it runs again at its next interval", ex);
		}
	}

	/**
	 * What one run did.
	 * @param recovered holds freed for lasting longer than the limit
	 * @param expired log rows closed as expired
	 * @param deleted log rows deleted past the retention
	 */
	public record Run(int recovered, int expired, int deleted) {
	}

}
