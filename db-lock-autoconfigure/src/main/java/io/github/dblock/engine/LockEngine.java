package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockChecks;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.ConnectionLockRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.StatementDeadline;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The lock engine: the one entry of every acquisition, in every mode. It checks the key,
 * observes the call ({@link Observation}), tells the {@link LockListener}s, bounds the
 * call's statements by one deadline ({@link StatementDeadline}) and hands the request to
 * the {@link LockStrategy} of its mode; at shutdown it refuses every mode's waiters at
 * once, then gives the holders of every mode one grace.
 *
 * @since 0.1.0
 */
public final class LockEngine implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LockEngine.class);

	private final LockRepository repository;

	private final Map<DbLockMode, LockStrategy> strategies = new EnumMap<>(DbLockMode.class);

	private final LeaseStrategy lease;

	/** The lease and fair modes' wake-ups (PostgreSQL), closed once every mode has shut down. */
	private final WakeUps wakeUps;

	private final @Nullable TransactionStrategy transactions;

	private final Events events = new Events();

	private volatile ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private volatile @Nullable DbLockObservationConvention observationConvention;

	private final LockScheduler scheduler = new LockScheduler();

	private volatile boolean closed;

	/**
	 * Creates an engine of the lease mode alone.
	 * @param repository where leases are kept
	 * @param settings how it waits, renews and shares keys between nodes
	 */
	public LockEngine(LockRepository repository, LockEngineSettings settings) {
		this(repository, null, settings);
	}

	/**
	 * Creates an engine.
	 * @param repository where leases are kept
	 * @param connectionLocks the transaction and named modes' storage; {@code null} for
	 * the lease mode alone
	 * @param settings how it waits, renews and shares keys between nodes
	 */
	public LockEngine(LockRepository repository, @Nullable ConnectionLockRepository connectionLocks,
			LockEngineSettings settings) {
		this.repository = repository;
		this.wakeUps = WakeUps.of(repository, this.scheduler);
		this.lease = new LeaseStrategy(repository, settings, this.events, this.scheduler, this.wakeUps);
		this.transactions = (connectionLocks != null)
				? new TransactionStrategy(connectionLocks, settings.backoff(), this.events) : null;
		add(this.lease);
		add(this.transactions);
		add((connectionLocks != null)
				? new NamedStrategy(connectionLocks, settings.backoff(), this.events, this.scheduler) : null);
		add(repository.readWriteLocks()
			.map((locks) -> new ReadWriteStrategy(locks, settings, this.events, this.scheduler))
			.orElse(null));
		add(repository.fairQueue()
			.map((queue) -> new FairStrategy(queue, settings, this.events, this.scheduler, this.wakeUps))
			.orElse(null));
		add(new SemaphoreStrategy(repository, settings, this.events, this.scheduler));
	}

	private void add(@Nullable LockStrategy strategy) {
		if (strategy != null) {
			for (DbLockMode mode : strategy.modes()) {
				this.strategies.put(mode, strategy);
			}
		}
	}

	/**
	 * The scheduler of this engine's background work, for the jobs that use the engine
	 * too (the reaper, the recovery job, the lock log). It stops once the engine has shut
	 * down and each job has shut down its {@link LockScheduler.Tasks tasks}.
	 * @return the scheduler
	 */
	public LockScheduler scheduler() {
		return this.scheduler;
	}

	/**
	 * The fencing token of the holder that took a lease row from the database: the row's
	 * token followed by the 16 bits that count local hand-offs (zero), as
	 * {@link LockHandle#fencingToken()} of that acquisition says.
	 * @param rowToken the token column of the lock table's row
	 * @return the fencing token
	 */
	public static long firstFencingToken(long rowToken) {
		return rowToken << HeldLease.HANDOFF_BITS;
	}

	/**
	 * Adds a listener, told of every acquisition, release and lost lock from now on.
	 * @param listener the listener
	 */
	public void addListener(LockListener listener) {
		this.events.add(listener);
	}

	/**
	 * Removes a listener.
	 * @param listener the listener
	 * @return whether it was one of this engine's
	 */
	public boolean removeListener(LockListener listener) {
		return this.events.remove(listener);
	}

	/**
	 * The locks the threads of this JVM hold now, in the lease, named and read/write modes,
	 * and in the transaction mode until their transaction ends.
	 * @return the held locks, in no particular order
	 */
	public List<HeldKey> held() {
		List<HeldKey> held = new ArrayList<>();
		long now = System.nanoTime();
		for (LockStrategy strategy : distinct()) {
			strategy.held(held, now);
		}
		return held;
	}

	/**
	 * The keys that threads of this JVM wait for now in this JVM, behind another of its
	 * threads that holds the key or asks the database for it, in every mode that queues
	 * locally (the lease, named and fair modes and the writers of the read/write modes; the
	 * transaction mode and the readers wait in the database, and are not listed). The
	 * threads add up to {@link #localWaiters()}.
	 * @return the waiting keys, each with at least one thread, in no particular order
	 */
	public List<WaitingKey> waiting() {
		List<WaitingKey> waiting = new ArrayList<>();
		for (LockStrategy strategy : distinct()) {
			strategy.waiting(waiting);
		}
		return waiting;
	}

	/**
	 * How many threads of this JVM wait now for a key another of its threads holds or asks
	 * the database for, in every mode that queues locally (the lease, named and fair modes
	 * and the writers of the read/write modes; the transaction mode and the readers wait in
	 * the database).
	 * @return the number of local waiters
	 */
	public int localWaiters() {
		int waiting = 0;
		for (LockStrategy strategy : distinct()) {
			waiting += strategy.waiting();
		}
		return waiting;
	}

	/**
	 * Why a mode cannot be used with this database, checked now: for a check at start-up.
	 * @param mode the mode
	 * @return the reason, or empty if it can
	 */
	public Optional<String> unavailable(DbLockMode mode) {
		LockStrategy strategy = this.strategies.get(mode);
		return (strategy != null) ? strategy.unavailable() : Optional.of(missing(mode));
	}

	private static String missing(DbLockMode mode) {
		return switch (mode) {
			case TRANSACTION, NAMED -> "this lock engine was created for the lease mode alone (no ConnectionLockRepository)";
			case READ, WRITE -> "this lock engine's repository has no read/write storage";
			case FAIR -> "the lock repository has no fair queue (LockRepository.fairQueue())";
			default -> "this lock engine has no " + mode + " mode";
		};
	}

	private Collection<LockStrategy> distinct() {
		return new LinkedHashSet<>(this.strategies.values());
	}

	/**
	 * What makes a transaction-mode wait that runs out roll back the caller's whole
	 * transaction on this server, checked now: for a warning at start-up. There, such a call
	 * fails with a {@link DbLockException} saying so, never retried.
	 * @return what shows it (MySQL's or MariaDB's {@code innodb_rollback_on_timeout=ON}), or
	 * empty if a wait that runs out rolls back its statement alone, or the engine has no
	 * transaction mode
	 * @throws org.springframework.dao.DataAccessException if the database failed
	 */
	public Optional<String> transactionLockTimeoutRollsBackTransaction() {
		return (this.transactions != null) ? this.transactions.timeoutRollsBackTransaction() : Optional.empty();
	}

	/**
	 * How far behind its schedule the lease watchdog is now: the longest time a lease it
	 * renews has waited past its renewal time, zero if none is due. A lag that nears the
	 * leases' length means they may be lost (a watchdog thread starved of CPU, a slow
	 * database).
	 * @return the lag
	 */
	public Duration watchdogLag() {
		return this.lease.watchdogLag();
	}

	/**
	 * Observes every acquisition call (an {@link Observation} named by the convention, by
	 * default {@value DefaultDbLockObservationConvention#NAME}, around the call: traces show
	 * lock waits). Not observed by default.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Replaces the {@link DefaultDbLockObservationConvention}.
	 * @param observationConvention the convention, or {@code null} for the default
	 */
	public void setObservationConvention(@Nullable DbLockObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
	}

	/**
	 * Acquires a key, waiting up to the request's wait while another owner holds it.
	 * @param request what to acquire
	 * @return the handle, to be closed to release
	 * @throws LockAcquisitionException if the key stayed held for the whole wait
	 * @throws DbLockException for a key too long, a database failure or an interrupt (the
	 * thread's interrupt flag is then set again)
	 */
	public LockHandle acquire(LockRequest request) {
		long start = System.nanoTime();
		LockHandle handle;
		try {
			handle = acquireInterruptibly(request);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DbLockException("Interrupted while waiting for lock '" + request.key() + "'", ex);
		}
		if (handle == null) {
			throw new LockAcquisitionException(request.key(), Duration.ofNanos(System.nanoTime() - start));
		}
		return handle;
	}

	/**
	 * Acquires a key if it can be had without waiting for another owner; the request's
	 * wait is not used.
	 * @param request what to acquire
	 * @return the handle, or empty if the key is held
	 */
	public Optional<LockHandle> tryAcquire(LockRequest request) {
		LockRequest once = request.withWait(Duration.ZERO);
		try {
			return Optional.ofNullable(acquireInterruptibly(once));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DbLockException("Interrupted while acquiring lock '" + request.key() + "'", ex);
		}
	}

	/**
	 * Acquires several keys, all or none: each by its request, in the order of their keys
	 * (so that callers naming the same keys in any order never wait for each other in a
	 * circle), within one wait, that of the first request. Keys named twice are taken once.
	 * Every request is checked before any key is taken. When a key stays held past the wait,
	 * or a failure ends the call, the keys already taken are released before it returns, at
	 * once even inside a transaction (the caller did no work under them).
	 * @param requests one request per key, in a mode that
	 * {@link LockChecks#allowsSeveralKeys takes part}: not the transaction mode (whose locks
	 * end with the transaction alone) nor the semaphore mode
	 * @return one handle holding every key, to be closed to release them all
	 * @throws LockAcquisitionException naming the key that stayed held for the whole wait
	 * @throws DbLockException for no request, a request in a mode that does not take part, an
	 * invalid key, a database failure or an interrupt (the thread's interrupt flag is then set
	 * again)
	 */
	public LockHandle acquireAll(List<LockRequest> requests) {
		for (LockRequest request : requests) {
			if (!LockChecks.allowsSeveralKeys(request.mode())) {
				throw new DbLockException("Lock '" + request.key() + "' cannot be taken with other keys in the "
						+ request.mode() + " mode: " + LockChecks.SEVERAL_KEYS_RULE);
			}
			// every key is checked before any is taken
			checkRequest(request);
		}
		return SeveralKeys.acquire(requests, this::acquireInterruptibly);
	}

	/**
	 * Acquires a key, waiting up to the request's wait, and lets an interrupt end the wait.
	 * @param request what to acquire
	 * @return the handle, or {@code null} if the key stayed held for the whole wait
	 * @throws InterruptedException if the thread is interrupted while waiting
	 */
	public @Nullable LockHandle acquireInterruptibly(LockRequest request) throws InterruptedException {
		long start = System.nanoTime();
		DbLockObservationContext context = new DbLockObservationContext(request.key(), request.mode());
		Observation observation = Observation.createNotStarted(this.observationConvention,
				DefaultDbLockObservationConvention.INSTANCE, () -> context, this.observationRegistry)
			.start();
		LockHandle handle;
		try (Observation.Scope scope = observation.openScope();
				StatementDeadline deadline = StatementDeadline.open(start + request.waitTime().toNanos())) {
			handle = acquireNow(request);
		}
		catch (InterruptedException | RuntimeException | Error ex) {
			this.events.notAcquired(request.key(), request.mode(), LockListener.Outcome.FAILED, System.nanoTime() - start);
			context.setOutcome("failed");
			observation.error(ex).stop();
			throw ex;
		}
		if (handle != null) {
			this.events.acquired(request.key(), request.mode(), System.nanoTime() - start);
			context.setOutcome(DbLockObservationContext.ACQUIRED);
		}
		else {
			this.events.notAcquired(request.key(), request.mode(), LockListener.Outcome.TIMED_OUT,
					System.nanoTime() - start);
			context.setOutcome("timed_out");
		}
		observation.stop();
		return handle;
	}

	private @Nullable LockHandle acquireNow(LockRequest request) throws InterruptedException {
		checkRequest(request);
		refuseIfClosed(request.key());
		LockStrategy strategy = this.strategies.get(request.mode());
		if (strategy == null) {
			throw new DbLockException("Could not acquire lock '" + request.key() + "' in the " + request.mode()
					+ " mode: " + missing(request.mode()));
		}
		return strategy.acquire(request);
	}

	/**
	 * Checks a stored key: not blank, not longer than the lock table holds.
	 * @param key the key
	 * @throws DbLockException if it is not a valid key
	 */
	public void checkKey(String key) {
		LockChecks.checkKey(key);
		if (key.length() > this.repository.maxKeyLength()) {
			throw new DbLockException("Lock key is " + key.length() + " characters long, the lock table holds at most "
					+ this.repository.maxKeyLength() + ": '" + key.substring(0, 40) + "...'");
		}
	}

	private void checkRequest(LockRequest request) {
		checkKey(request.key());
		if (request.mode() == DbLockMode.LEASE) {
			SemaphoreStrategy.checkNotPermitKey(request.key());
		}
	}

	private void refuseIfClosed(String key) {
		if (this.closed) {
			throw new DbLockException("Could not acquire lock '" + key + "': the lock engine is shut down");
		}
	}

	/**
	 * Shuts down at once: {@link #shutdown(Duration)} with no time for holders to finish.
	 */
	@Override
	public void close() {
		shutdown(Duration.ZERO);
	}

	/**
	 * Shuts the engine down, leaving nothing of this JVM's in the lock table: new
	 * acquisitions are refused, and so are the threads waiting for a key, at once (with a
	 * {@link DbLockException}); holders have up to {@code grace} to finish and release,
	 * their leases renewed meanwhile; then the leases still held are marked lost (reported
	 * to their holders as any lost lease is) and their rows deleted, and the watchdog stops.
	 * Returns within {@code grace} plus the time of the deletes, plus up to half a second for
	 * the wake-ups' listener (PostgreSQL) to give its connection back.
	 * @param grace how long holders may still work; zero for none
	 */
	public void shutdown(Duration grace) {
		this.closed = true;
		long deadline = System.nanoTime() + grace.toNanos();
		List<LockStrategy> strategies = new ArrayList<>(distinct());
		// the other modes first, the lease mode last, as they always shut down
		strategies.remove(this.lease);
		strategies.add(this.lease);
		for (LockStrategy strategy : strategies) {
			strategy.refuse();
		}
		RuntimeException failure = null;
		for (LockStrategy strategy : strategies) {
			try {
				strategy.shutdown(deadline);
			}
			catch (RuntimeException ex) {
				// the other modes still end what they hold
				failure = ex;
			}
		}
		this.wakeUps.close();
		this.scheduler.shutdown();
		if (failure != null) {
			throw failure;
		}
	}

}
