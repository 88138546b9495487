package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.jdbc.ConnectionLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.StatementDeadline;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The lock engine: checks, reentrancy, the local gate, waiting and handles, over a lock
 * mode that does the database's part. The lease mode is described here; the transaction
 * and named modes ({@link io.github.dblock.DbLockMode}) hold no lease and are classes of
 * their own ({@code TransactionMode}, {@code NamedMode}) that the engine hands a request of
 * theirs to, and so are the read and write modes ({@code ReadWriteMode}), whose holders
 * have leases renewed by a watchdog of the same kind, and the fair mode ({@code FairMode}),
 * whose tickets have leases of their own in a queue table.
 * <ul>
 * <li>A thread that holds a key takes it again with no SQL, as long as this JVM knows its
 * lease is valid (its local deadline: the time the statement that took or last extended it
 * was sent, plus the lease). A re-entry into a lease that may have ended is a fresh
 * acquisition with a new token; the stale outer handle stays lost.</li>
 * <li>Threads of this JVM that want one key queue on a fair local gate, so that one of them
 * at a time asks the database (with {@link Backoff}) until it acquires or its wait runs
 * out.</li>
 * <li>A released lease passes to the next local waiter without a statement if both are
 * renewed leases of one length, and with one update that extends it otherwise; its
 * fencing token is the database's token shifted left by 16 bits plus the hand-off count, so
 * tokens increase with every acquisition. A JVM passes a key among its threads for at most
 * a local turn ({@link LockEngineSettings#localTurn()}) while another JVM asks for it:
 * then the key goes back to the database and this JVM's next thread holds back until the
 * other JVM had a chance to take it.</li>
 * <li>A release that does not hand on returns once the row's delete is committed (releases
 * at the same moment share one statement), so that another node finds the key free; inside
 * a transaction, the release waits for the transaction to complete.</li>
 * <li>A {@link LeaseWatchdog} renews renewed leases; a lease found lost is marked so and
 * logged at ERROR, and a handle is not held once its local deadline has passed.</li>
 * </ul>
 */
public final class LockEngine implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LockEngine.class);

	/** What a thread that holds a key gets when it asks for it again. */
	private enum Reentry {

		/** The held lease, counted once more. */
		REENTER,

		/** The held fixed lease, extended to the longer one asked for. */
		EXTEND,

		/** A renewed lease asked for inside a fixed one: refused. */
		REFUSE,

		/** The held lease may have ended: a fresh acquisition. */
		STALE

	}

	private static final long SHUTDOWN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final LockRepository repository;

	private final LockEngineSettings settings;

	private final LockMode mode;

	private volatile ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private volatile @Nullable DbLockObservationConvention observationConvention;

	private final LocalKeys keys = new LocalKeys();

	private final LeaseWatchdog watchdog;

	private final ReleasePath releases;

	private final @Nullable TransactionMode transactions;

	private final @Nullable NamedMode named;

	private final @Nullable ReadWriteMode readWrite;

	private final @Nullable FairMode fair;

	private final Events events = new Events();

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
		this.settings = settings;
		this.mode = new LeaseMode(repository, this.scheduler);
		this.watchdog = new LeaseWatchdog(this.mode, this.scheduler);
		this.releases = new ReleasePath(this.mode, this.watchdog, this.keys, settings, this.events);
		this.transactions = (connectionLocks != null)
				? new TransactionMode(connectionLocks, settings.backoff(), this.events) : null;
		this.named = (connectionLocks != null)
				? new NamedMode(connectionLocks, settings.backoff(), this.events, this.scheduler) : null;
		this.readWrite = repository.readWriteLocks()
			.map((readWriteLocks) -> new ReadWriteMode(readWriteLocks, settings, this.events, this.scheduler))
			.orElse(null);
		this.fair = repository.fairQueue()
			.map((queue) -> new FairMode(queue, settings, this.events, this.scheduler))
			.orElse(null);
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
		for (LocalKey local : this.keys.inUse()) {
			Hold hold = local.hold;
			if (hold != null && !hold.done) {
				held.add(new HeldKey(local.key, DbLockMode.LEASE, hold.thread.getName(),
						Duration.ofNanos(now - hold.startedAt)));
			}
		}
		if (this.named != null) {
			this.named.held(held, now);
		}
		if (this.transactions != null) {
			this.transactions.held(held, now);
		}
		if (this.readWrite != null) {
			this.readWrite.held(held, now);
		}
		if (this.fair != null) {
			this.fair.held(held, now);
		}
		return held;
	}

	/**
	 * How many threads of this JVM wait now for a key another of its threads holds or asks
	 * the database for, in the lease and named modes (the transaction mode waits in the
	 * database).
	 * @return the number of local waiters
	 */
	public int localWaiters() {
		int waiting = 0;
		for (LocalKey local : this.keys.inUse()) {
			waiting += local.gate.queued();
		}
		return waiting + ((this.named != null) ? this.named.waiting() : 0) + ((this.fair != null) ? this.fair.waiting() : 0);
	}

	/**
	 * Why the named mode cannot be used with this database, checked now: for a check at
	 * start-up.
	 * @return the reason, or empty if it can
	 */
	public Optional<String> namedLocksUnavailable() {
		return (this.named != null) ? this.named.unavailable() : Optional.of("the engine has no named-lock storage");
	}

	/**
	 * Why the fair mode cannot be used with this database, checked now: for a check at
	 * start-up.
	 * @return the reason, or empty if it can
	 */
	public Optional<String> fairLocksUnavailable() {
		return (this.fair != null) ? this.fair.unavailable()
				: Optional.of("the lock repository has no fair queue (LockRepository.fairQueue())");
	}

	/**
	 * Why the transaction mode cannot be used with this database, checked now: for a check
	 * at start-up.
	 * @return the reason, or empty if it can
	 */
	public Optional<String> transactionLocksUnavailable() {
		return (this.transactions != null) ? this.transactions.unavailable()
				: Optional.of("the engine has no row-lock storage");
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
		return this.watchdog.lag();
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
		LockRequest once = new LockRequest(request.key(), Duration.ZERO, request.lease(), request.renewed(),
				request.minimumHold(), request.mode());
		try {
			return Optional.ofNullable(acquireInterruptibly(once));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DbLockException("Interrupted while acquiring lock '" + request.key() + "'", ex);
		}
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
		String key = request.key();
		checkKey(key);
		if (request.mode() != DbLockMode.LEASE) {
			refuseIfClosed(key);
			return switch (request.mode()) {
				case TRANSACTION -> connectionMode(this.transactions, request).acquire(key, request.waitTime());
				case NAMED -> connectionMode(this.named, request).acquire(key, request.waitTime());
				case READ, WRITE -> readWriteMode(request).acquire(request);
				case FAIR -> fairMode(request).acquire(request);
				case LEASE -> throw new IllegalStateException();
			};
		}
		long renewalPeriod = request.renewed() ? this.settings.renewalPeriod(request.lease()).toNanos() : 0;
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		LocalKey local = this.keys.enter(key);
		boolean kept = false;
		try {
			refuseIfClosed(key);
			Hold current = local.hold;
			if (current != null && current.thread == Thread.currentThread() && current.isActive()) {
				LockHandle again = reenter(current, request);
				if (again != null) {
					return again;
				}
				if (local.hold == current && current.isActive()) {
					// its lease may have ended: this thread still owns the gate, and asks the database afresh
					Hold fresh = poll(request, local, deadline, renewalPeriod);
					if (fresh == null) {
						refuseIfClosed(key);
						return null;
					}
					local.hold = fresh;
					kept = true;
					return fresh.reenter();
				}
			}
			LocalGate.Passage<HeldLease> passage = local.gate.enter(request.waitTime().toNanos());
			if (passage == null) {
				refuseIfClosed(key);
				return null;
			}
			Hold hold;
			try {
				if (this.closed) {
					HeldLease handedOn = passage.handedOn();
					if (handedOn != null) {
						this.releases.end(handedOn, Duration.ZERO);
					}
					refuseIfClosed(key);
				}
				hold = takeOver(passage.handedOn(), request, renewalPeriod);
				if (hold == null) {
					holdBack(passage.holdBackUntil(), deadline);
					hold = poll(request, local, deadline, renewalPeriod);
				}
			}
			catch (InterruptedException | RuntimeException ex) {
				local.gate.leave();
				throw ex;
			}
			if (hold == null) {
				local.gate.leave();
				refuseIfClosed(key);
				return null;
			}
			local.hold = hold;
			kept = true;
			return hold.reenter();
		}
		finally {
			if (!kept) {
				this.keys.exit(local);
			}
		}
	}

	/**
	 * Why the read/write modes cannot be used with this database, checked now: for a check at
	 * start-up.
	 * @return the reason, or empty if they can
	 */
	public Optional<String> readWriteLocksUnavailable() {
		return (this.readWrite != null) ? this.readWrite.unavailable()
				: Optional.of("the engine's repository has no read/write storage");
	}

	/**
	 * Checks a stored key: not blank, not longer than the lock table holds.
	 * @param key the key
	 * @throws DbLockException if it is not a valid key
	 */
	public void checkKey(String key) {
		if (key.isBlank()) {
			throw new DbLockException("Lock key must not be blank");
		}
		if (key.length() > this.repository.maxKeyLength()) {
			throw new DbLockException("Lock key is " + key.length() + " characters long, the lock table holds at most "
					+ this.repository.maxKeyLength() + ": '" + key.substring(0, 40) + "...'");
		}
	}

	private static <M> M connectionMode(@Nullable M mode, LockRequest request) {
		if (mode == null) {
			throw new DbLockException("Could not acquire lock '" + request.key() + "' in the " + request.mode()
					+ " mode: this lock engine was created for the lease mode alone (no ConnectionLockRepository)");
		}
		return mode;
	}

	private ReadWriteMode readWriteMode(LockRequest request) {
		if (this.readWrite == null) {
			throw new DbLockException("Could not acquire lock '" + request.key() + "' in the " + request.mode()
					+ " mode: this lock engine's repository has no read/write storage");
		}
		return this.readWrite;
	}

	private FairMode fairMode(LockRequest request) {
		if (this.fair == null) {
			throw new DbLockException("Could not acquire lock '" + request.key() + "' in the FAIR mode: the lock "
					+ "repository has no fair queue (LockRepository.fairQueue())");
		}
		return this.fair;
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
	 * Returns within {@code grace} plus the time of the deletes.
	 * @param grace how long holders may still work; zero for none
	 */
	public void shutdown(Duration grace) {
		this.closed = true;
		long started = System.nanoTime();
		for (LocalKey local : this.keys.inUse()) {
			local.gate.refuseWaiters();
			Thread polling = local.polling;
			if (polling != null) {
				LockSupport.unpark(polling);
			}
		}
		long deadline = started + grace.toNanos();
		if (this.named != null) {
			this.named.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
		}
		if (this.readWrite != null) {
			this.readWrite.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
		}
		if (this.fair != null) {
			this.fair.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
		}
		while (holding() && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(SHUTDOWN_CHECK_NANOS);
		}
		for (LocalKey local : this.keys.inUse()) {
			Hold hold = local.hold;
			if (hold != null) {
				hold.lease.lost("the application shut down while it was held; its row is deleted");
				this.releases.end(hold.lease, Duration.ZERO);
			}
		}
		this.watchdog.close();
		this.mode.close();
		this.scheduler.shutdown();
	}

	private boolean holding() {
		for (LocalKey local : this.keys.inUse()) {
			if (local.hold != null) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The current thread's hold once more, if its lease serves the request; {@code null}
	 * if it may have ended (it is then marked lost and ended).
	 */
	private @Nullable LockHandle reenter(Hold current, LockRequest request) {
		HeldLease lease = current.lease;
		switch (reentry(lease, request)) {
			case REENTER -> {
				return current.reenterIfHeld();
			}
			case EXTEND -> {
				if (extend(lease, request.lease(), false, false)) {
					return current.reenterIfHeld();
				}
			}
			case REFUSE -> throw new DbLockException("Lock '" + request.key() + "' is held by this thread with a fixed lease of "
					+ lease.duration + "; it cannot be taken again with a renewed lease. Take it with a renewed lease "
					+ "outside, or with a fixed lease inside");
			case STALE -> {
			}
		}
		lease.lost("its thread asked for it again after its lease may have ended");
		this.releases.end(lease, Duration.ZERO);
		return null;
	}

	private Reentry reentry(HeldLease lease, LockRequest request) {
		if (!lease.isValid()) {
			return Reentry.STALE;
		}
		if (lease.renewed) {
			return Reentry.REENTER;
		}
		if (request.renewed()) {
			return Reentry.REFUSE;
		}
		return (lease.remainingNanos() >= request.lease().toNanos()) ? Reentry.REENTER : Reentry.EXTEND;
	}

	/** Sleeps until {@code until} or the wait's deadline, whichever is first; 0 for no sleep. */
	private static void holdBack(long until, long deadline) throws InterruptedException {
		if (until == 0) {
			return;
		}
		for (long now = System.nanoTime(); now - until < 0 && now - deadline < 0; now = System.nanoTime()) {
			LockSupport.parkNanos(Math.min(until - now, deadline - now));
			if (Thread.interrupted()) {
				throw new InterruptedException();
			}
		}
	}

	private @Nullable Hold poll(LockRequest request, LocalKey local, long deadline, long renewalPeriod)
			throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			if (this.closed) {
				return null;
			}
			long sentAt = System.nanoTime();
			Lease acquired = this.mode.acquire(request);
			if (acquired != null) {
				HeldLease lease = new HeldLease(local, acquired, request, sentAt, this.events);
				if (this.closed) {
					// taken while the engine shut down: given back, so that nothing of this JVM's stays
					this.releases.end(lease, Duration.ZERO);
					return null;
				}
				if (request.renewed()) {
					this.watchdog.watch(lease, renewalPeriod);
				}
				return new Hold(lease, request, 0, this.releases::release);
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0 || this.closed) {
				return null;
			}
			this.events.contended(request.key(), DbLockMode.LEASE);
			local.polling = Thread.currentThread();
			try {
				long until = System.nanoTime() + Math.min(this.settings.backoff().delayNanos(attempt), remaining);
				for (long left = until - System.nanoTime(); left > 0 && !this.closed; left = until - System.nanoTime()) {
					LockSupport.parkNanos(this, left);
					if (Thread.interrupted()) {
						throw new InterruptedException();
					}
				}
			}
			finally {
				local.polling = null;
			}
		}
	}

	/**
	 * The next hold of a lease handed on by the previous local holder, if this request can
	 * use it: as it is, or extended to the request's lease with one statement; else the
	 * lease is ended and {@code null} returned. The new holder's start is written to the
	 * database ({@code acquired_at}, which the recovery job's limit measures) by the
	 * extension, or by the watchdog's next renewal of a lease handed on as it is.
	 */
	private @Nullable Hold takeOver(@Nullable HeldLease handedOn, LockRequest request, long renewalPeriod) {
		if (handedOn == null) {
			return null;
		}
		if (handedOn.canHandOn() && request.minimumHold().isZero()) {
			boolean same = request.renewed() && handedOn.renewed && request.lease().equals(handedOn.duration);
			if (same || extend(handedOn, request.lease(), request.renewed(), true)) {
				if (!request.renewed()) {
					this.watchdog.unwatch(handedOn);
				}
				else if (!same) {
					// extended from now: renewed from now on; the same lease keeps its schedule
					this.watchdog.watch(handedOn, renewalPeriod);
				}
				int handoff = handedOn.handoffs + 1;
				handedOn.handoffs = handoff;
				if (!same) {
					// the extension wrote this holder's start
					handedOn.startWritten = handoff;
				}
				return new Hold(handedOn, request, handoff, this.releases::release);
			}
		}
		this.releases.end(handedOn, Duration.ZERO);
		return null;
	}

	/**
	 * Extends a lease to {@code duration} from now, with one statement, which also writes the
	 * database's now as its start for a {@code newHolder}; a lease found gone is marked lost.
	 * @return whether it was extended
	 */
	private boolean extend(HeldLease lease, Duration duration, boolean renewed, boolean newHolder) {
		lease.io.lock();
		try {
			if (!lease.isValid()) {
				return false;
			}
			long sentAt = System.nanoTime();
			Optional<Instant> extended = this.mode.extend(lease.current(), duration, newHolder);
			if (extended.isEmpty()) {
				lease.lost("its row was taken over by another owner or deleted when it was extended");
				return false;
			}
			lease.extended(extended.get(), duration, sentAt);
			lease.renewed = renewed;
			return true;
		}
		catch (RuntimeException ex) {
			logger.debug("Could not extend lock '" + lease.lease.key() + "'", ex);
			return false;
		}
		finally {
			lease.io.unlock();
		}
	}

}
