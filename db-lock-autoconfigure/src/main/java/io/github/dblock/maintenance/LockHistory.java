package io.github.dblock.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLockMode;
import io.github.dblock.engine.LockListener;
import io.github.dblock.engine.LockScheduler;
import io.github.dblock.jdbc.LockHistoryRepository;
import io.github.dblock.jdbc.LockHistoryRepository.Entry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The lock log's writer: a {@link LockListener} that records each hold the engine takes in
 * the database, and how it ended, as one row of the log. Off the callers' path: an event is
 * queued (no I/O, never blocking), and while the writer is started
 * ({@link org.springframework.context.SmartLifecycle}) a task on the engine's
 * {@link LockScheduler} writes what came in every flush interval, in one batch of inserts
 * and one of updates on a connection of its own; a hold that began and ended within one
 * interval is one insert. So the log adds no statement to an acquisition or a release. Its
 * {@link #stop()} writes what is still queued.
 * <p>
 * What it costs: at most {@value #CAPACITY} events wait; past that (a database down for a
 * long time) events are dropped, counted and logged, never a lock call blocked. Events
 * still queued when the JVM dies are lost (at most one flush interval's): the log of a
 * crashed JVM may miss its last holds. A hold whose holder died is closed later, as
 * expired, by {@link LockRecovery}. The recovery job's own lock ({@link LockRecovery#KEY}) is
 * not logged.
 *
 * @since 0.1.0
 */
public final class LockHistory extends PeriodicJob implements LockListener {

	/** The most events waiting to be written. */
	public static final int CAPACITY = 10_000;

	private static final Log logger = LogFactory.getLog(LockHistory.class);

	private final LockHistoryRepository repository;

	private final BlockingQueue<Event> queue = new ArrayBlockingQueue<>(CAPACITY);

	private final AtomicLong dropped = new AtomicLong();

	/** Rows not yet written: a failed write's, tried again with the next. */
	private final Map<Hold, Entry> unwritten = new LinkedHashMap<>();

	private final List<Entry> unwrittenEnds = new ArrayList<>();

	private long droppedReported;

	/**
	 * Creates the writer; nothing is written until {@link #start()}, {@link #flush()} or
	 * {@link #stop()}.
	 * @param repository the log's storage
	 * @param flushInterval the time between the end of a write and the start of the next
	 * @param scheduler where the writes take place: the engine's
	 */
	public LockHistory(LockHistoryRepository repository, Duration flushInterval, LockScheduler scheduler) {
		super(scheduler, "history", flushInterval, false);
		this.repository = repository;
	}

	@Override
	public void holdStarted(String key, DbLockMode mode, String owner, @Nullable Long token) {
		if (LockRecovery.KEY.equals(key)) {
			return;
		}
		offer(new Event(new Hold(key, owner), mode, token, Instant.now(), null));
	}

	@Override
	public void holdEnded(String key, DbLockMode mode, String owner, boolean lost) {
		if (LockRecovery.KEY.equals(key)) {
			return;
		}
		offer(new Event(new Hold(key, owner), mode, null, Instant.now(), lost ? LockHistoryRepository.Outcome.LOST : LockHistoryRepository.Outcome.RELEASED));
	}

	private void offer(Event event) {
		if (!this.queue.offer(event)) {
			this.dropped.incrementAndGet();
		}
	}

	/**
	 * Writes every event queued now, on the calling thread, and returns after the commit.
	 * @throws org.springframework.dao.DataAccessException if the database failed; the events
	 * are kept for the next write
	 */
	public synchronized void flush() {
		List<Event> events = new ArrayList<>();
		this.queue.drainTo(events);
		for (Event event : events) {
			if (event.outcome == null) {
				this.unwritten.put(event.hold, new Entry(event.hold.key, event.mode.name(), event.hold.owner,
						event.token, event.at, null, null));
			}
			else {
				Entry started = this.unwritten.get(event.hold);
				Entry ended = new Entry(event.hold.key, event.mode.name(), event.hold.owner, null, event.at, event.at,
						event.outcome);
				if (started == null) {
					this.unwrittenEnds.add(ended);
				}
				else if (started.outcome() == null) {
					// began and ended within one interval: one row, written whole
					this.unwritten.put(event.hold, new Entry(started.key(), started.mode(), started.owner(),
							started.token(), started.acquiredAt(), event.at, event.outcome));
				}
			}
		}
		trimUnwritten();
		if (this.unwritten.isEmpty() && this.unwrittenEnds.isEmpty()) {
			return;
		}
		this.repository.write(List.copyOf(this.unwritten.values()), List.copyOf(this.unwrittenEnds));
		this.unwritten.clear();
		this.unwrittenEnds.clear();
	}

	/** Keeps at most {@link #CAPACITY} rows waiting while the database fails; the oldest go. */
	private void trimUnwritten() {
		while (this.unwritten.size() + this.unwrittenEnds.size() > CAPACITY) {
			if (!this.unwrittenEnds.isEmpty()) {
				this.unwrittenEnds.remove(0);
			}
			else {
				this.unwritten.remove(this.unwritten.keySet().iterator().next());
			}
			this.dropped.incrementAndGet();
		}
	}

	/**
	 * The events dropped so far because too many waited (the database failing for long).
	 * @return the number dropped
	 */
	public long dropped() {
		return this.dropped.get();
	}

	@Override
	void runLogged() {
		try {
			flush();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not write the lock log; its rows are kept and written with the next ones", ex);
		}
		long dropped = this.dropped.get();
		if (dropped > this.droppedReported) {
			logger.warn("The lock log dropped " + (dropped - this.droppedReported) + " events: more than " + CAPACITY
					+ " waited to be written");
			this.droppedReported = dropped;
		}
	}

	/** Writes what is still queued, on the thread that stops the writer, after a write that runs. */
	@Override
	void stopped() {
		runLogged();
	}

	private record Hold(String key, String owner) {
	}

	private record Event(Hold hold, DbLockMode mode, @Nullable Long token, Instant at, LockHistoryRepository.@Nullable Outcome outcome) {
	}

}
