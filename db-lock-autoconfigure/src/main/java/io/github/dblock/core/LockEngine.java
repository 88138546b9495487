package io.github.dblock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.DbLockException;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The lock engine. A thread that already holds a key takes it again with no SQL
 * (reentrancy); threads of this JVM that want the same key queue on a local fair gate, so
 * that one of them at a time talks to the database about the key, and a local release
 * hands the key to the next local waiter at once; the one at the head of the queue polls
 * the database with {@link Backoff} until it acquires or its wait runs out. A renewed
 * lease is extended by a watchdog: one thread whose periodic sweep renews every lease that
 * is due; a lease found lost is marked so at once and logged at ERROR.
 * <p>
 * When a lease is released while another thread of this JVM waits for its key, the lease
 * passes to that thread: the row stays, and the new holder's fencing token is the
 * database's token followed by a local sequence (the database token shifted left by 16
 * bits, plus the hand-off count), so tokens still increase with every acquisition. A
 * renewed lease passes to a renewed request of the same length without a statement (the
 * watchdog goes on renewing it); any other request extends the row to its own lease with
 * one update. After 65,535 hand-offs the lease is released to the database.
 * <p>
 * Releases go to the database in the background: {@link LockHandle#close()} returns at
 * once, and one thread, after a pause of 0.1 ms, deletes the rows of every lease released
 * meanwhile in one statement, so that a releasing thread does not wait for a commit and
 * concurrent releases share one. Until its row is deleted a key stays taken; a thread of
 * this JVM that asks for it meanwhile takes the lease over as above, and one that would
 * not wait learns the outcome first. A lease whose end this JVM cannot rule out (its time has
 * passed on the local clock, or it was found lost), and one with a minimum hold, is
 * released before {@code close()} returns, so that a lost lease is reported to its
 * holder.
 */
public final class LockEngine implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LockEngine.class);

	/** Bits of a fencing token that count local hand-offs of one database lease. */
	private static final int HANDOFF_BITS = 16;

	private static final int MAX_HANDOFFS = (1 << HANDOFF_BITS) - 1;

	/** The most leases ended by one statement. */
	private static final int RELEASE_BATCH = 128;

	/**
	 * How long the background thread waits before it ends a released lease: time for more
	 * releases to share its statement, and for a thread of this JVM to take the lease over,
	 * short beside the pauses of other nodes polling for the key.
	 */
	private static final Duration RELEASE_PAUSE = Duration.ofNanos(100_000);

	private final LockRepository repository;

	private final Backoff backoff;

	private final @Nullable Duration renewInterval;

	private final OwnerIds ownerIds = new OwnerIds();

	private final ConcurrentHashMap<String, LocalKey> localKeys = new ConcurrentHashMap<>();

	private final ScheduledThreadPoolExecutor watchdog;

	/** Renewed leases, visited by one periodic sweep of the watchdog thread. */
	private final Set<Leased> renewing = ConcurrentHashMap.newKeySet();

	private volatile long sweepTick = Long.MAX_VALUE;

	private @Nullable ScheduledFuture<?> sweeper;

	private volatile boolean closed;

	/** Ends released leases in the background, or {@code null} to end them at once. */
	private final @Nullable BatchWorker<Leased> releases;

	/**
	 * Creates an engine that renews leases every third of their length.
	 * @param repository where leases are kept
	 * @param backoff the pauses between attempts on a held key
	 */
	public LockEngine(LockRepository repository, Backoff backoff) {
		this(repository, backoff, null);
	}

	/**
	 * Creates an engine.
	 * @param repository where leases are kept
	 * @param backoff the pauses between attempts on a held key
	 * @param renewInterval how often the watchdog renews a lease; {@code null} for a third
	 * of the lease
	 */
	public LockEngine(LockRepository repository, Backoff backoff, @Nullable Duration renewInterval) {
		this(repository, backoff, renewInterval, true);
	}

	/**
	 * Creates an engine.
	 * @param repository where leases are kept
	 * @param backoff the pauses between attempts on a held key
	 * @param renewInterval how often the watchdog renews a lease; {@code null} for a third
	 * of the lease
	 * @param releaseInBackground whether released leases are deleted by a background thread
	 * (see the class description) rather than before {@link LockHandle#close()} returns
	 */
	public LockEngine(LockRepository repository, Backoff backoff, @Nullable Duration renewInterval,
			boolean releaseInBackground) {
		if (renewInterval != null && (renewInterval.isNegative() || renewInterval.isZero())) {
			throw new IllegalArgumentException("Renewal interval must be positive, got " + renewInterval);
		}
		this.repository = repository;
		this.backoff = backoff;
		this.renewInterval = renewInterval;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("db-lock-watchdog-");
		threads.setDaemon(true);
		this.watchdog = new ScheduledThreadPoolExecutor(1, threads);
		this.watchdog.setRemoveOnCancelPolicy(true);
		CustomizableThreadFactory releasers = new CustomizableThreadFactory("db-lock-release-");
		releasers.setDaemon(true);
		this.releases = releaseInBackground ? new BatchWorker<>(this::endAll, RELEASE_BATCH, RELEASE_PAUSE, releasers) : null;
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
				request.minimumHold());
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
		String key = request.key();
		checkKey(key);
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		LocalKey local = enter(key);
		boolean keepsSlot = false;
		try {
			if (this.closed) {
				throw new DbLockException("Could not acquire lock '" + key + "': the lock engine is closed");
			}
			Hold current = local.hold;
			if (current != null && current.thread == Thread.currentThread()) {
				LockHandle again = current.reenterIfHeld();
				if (again != null) {
					return again;
				}
			}
			LocalGate.Passage<Leased> passage = local.gate.enter(request.waitTime().toNanos());
			if (passage == null) {
				return null;
			}
			Hold hold;
			try {
				hold = takeOver(passage.handedOn(), request);
				if (hold == null) {
					hold = poll(request, local, deadline);
				}
			}
			catch (InterruptedException | RuntimeException ex) {
				local.gate.leave();
				throw ex;
			}
			if (hold == null) {
				local.gate.leave();
				return null;
			}
			local.hold = hold;
			keepsSlot = true;
			return hold.reenter();
		}
		finally {
			if (!keepsSlot) {
				exit(key, local);
			}
		}
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

	/**
	 * Ends the leases released so far, then stops the watchdog. Leases still held end at
	 * their expiry; leases released from now on are ended at once.
	 */
	@Override
	public void close() {
		this.closed = true;
		if (this.releases != null) {
			this.releases.close();
		}
		this.watchdog.shutdownNow();
	}

	private @Nullable Hold poll(LockRequest request, LocalKey local, long deadline) throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			long sentAt = System.nanoTime();
			Lease acquired = attempt(request);
			if (acquired != null) {
				Leased leased = new Leased(local, acquired, request, sentAt);
				if (request.renewed()) {
					watch(leased, renewalPeriod(request));
				}
				return new Hold(leased, request, 0);
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return null;
			}
			TimeUnit.NANOSECONDS.sleep(Math.min(this.backoff.delayNanos(attempt), remaining));
		}
	}

	private long renewalPeriod(LockRequest request) {
		return (this.renewInterval != null) ? this.renewInterval.toNanos() : request.lease().toNanos() / 3;
	}

	private @Nullable Lease attempt(LockRequest request) {
		try {
			return this.repository.tryAcquire(request.key(), this.ownerIds.next(), request.lease()).orElse(null);
		}
		catch (DataAccessException ex) {
			throw new DbLockException("Could not acquire lock '" + request.key() + "': the database failed", ex);
		}
	}

	/** Renews a lease every {@code period} from now on, in the watchdog's sweep. */
	private void watch(Leased leased, long period) {
		leased.renewalPeriod = period;
		leased.nextRenewal = System.nanoTime() + period;
		this.renewing.add(leased);
		// sweep often enough that no lease waits more than a quarter period past its renewal
		long tick = Math.max(period / 4, TimeUnit.MILLISECONDS.toNanos(1));
		if (tick < this.sweepTick) {
			synchronized (this) {
				if (tick < this.sweepTick) {
					ScheduledFuture<?> previous = this.sweeper;
					if (previous != null) {
						previous.cancel(false);
					}
					this.sweepTick = tick;
					this.sweeper = this.watchdog.scheduleWithFixedDelay(this::sweep, tick, tick, TimeUnit.NANOSECONDS);
				}
			}
		}
	}

	private void sweep() {
		for (Leased leased : this.renewing) {
			try {
				if (leased.released || leased.lostSince != null) {
					this.renewing.remove(leased);
				}
				else if (System.nanoTime() - leased.nextRenewal >= 0 && !leased.local.gate.isPending(leased)) {
					// a lease released and not yet taken over or ended is left to lapse if its end is held up
					renew(leased);
				}
			}
			catch (RuntimeException ex) {
				logger.error("Watchdog failed on lock '" + leased.lease.key() + "'", ex);
			}
		}
	}

	/** Renews a lease, never at the same time as {@link #extend} takes it over. */
	private void renew(Leased leased) {
		synchronized (leased) {
			if (!leased.released) {
				renewHeld(leased);
			}
		}
	}

	private void renewHeld(Leased leased) {
		long sentAt = System.nanoTime();
		leased.nextRenewal = sentAt + leased.renewalPeriod;
		try {
			Optional<Instant> renewed = this.repository.renew(leased.lease, leased.duration);
			if (renewed.isPresent()) {
				leased.expiresAt = renewed.get();
				leased.localDeadline = sentAt + leased.duration.toNanos();
			}
			else if (!leased.released) {
				lost(leased, "its row was taken over by another owner or deleted");
			}
		}
		catch (RuntimeException ex) {
			if (System.nanoTime() - leased.localDeadline >= 0) {
				lost(leased, "the database could not be reached to renew it before it ended (" + ex.getMessage() + ")");
			}
			else {
				logger.warn("Could not renew lock '" + leased.lease.key() + "'; trying again before its lease ends at "
						+ leased.expiresAt, ex);
			}
		}
	}

	private void lost(Leased leased, String reason) {
		synchronized (leased) {
			if (leased.lostSince != null) {
				return;
			}
			leased.lostSince = Instant.now();
		}
		this.renewing.remove(leased);
		logger.error("Lost lock '" + leased.lease.key() + "' (owner " + leased.lease.owner() + ", token "
				+ leased.lease.token() + ") at " + leased.lostSince + ": " + reason + "; another owner may hold it now");
	}

	private LocalKey enter(String key) {
		return this.localKeys.compute(key, (k, local) -> {
			LocalKey entered = (local != null) ? local : new LocalKey();
			entered.users++;
			return entered;
		});
	}

	private void exit(String key, LocalKey local) {
		this.localKeys.computeIfPresent(key, (k, current) -> (current == local && --current.users == 0) ? null : current);
	}

	private void release(Hold hold) {
		Leased leased = hold.leased;
		LocalKey local = leased.local;
		local.hold = null;
		try {
			if (hold.request.minimumHold().isZero() && leased.isCertainlyHeld()) {
				// a local waiter takes the lease over; else it is left pending for the background thread, and a
				// thread of this JVM that arrives first takes it over; once the engine is closed, it is reclaimed
				// here and ended at once, unless a thread took it over meanwhile
				boolean passed = (this.releases == null) ? local.gate.handOn(leased)
						: local.gate.handOnOrRelease(leased) || releaseInBackground(leased) || !local.gate.reclaim(leased);
				if (passed) {
					return;
				}
			}
			try {
				end(leased, hold.request.minimumHold());
			}
			finally {
				local.gate.leave();
			}
		}
		finally {
			exit(leased.lease.key(), local);
		}
	}

	/**
	 * Queues a lease left pending in its gate for the background thread, unless it is queued
	 * already (taken over and released again before the thread came to it): one entry per
	 * lease, however often it is released meanwhile.
	 * @return whether the lease is queued; {@code false} once the engine is closed
	 */
	private boolean releaseInBackground(Leased leased) {
		BatchWorker<Leased> releases = Objects.requireNonNull(this.releases);
		if (!leased.queued.compareAndSet(false, true)) {
			return true;
		}
		String key = leased.lease.key();
		// the queue entry keeps the key's local state, as a thread would
		enter(key);
		boolean submitted = false;
		try {
			submitted = releases.submit(leased);
		}
		finally {
			if (!submitted) {
				leased.queued.set(false);
				exit(key, leased.local);
			}
		}
		return submitted;
	}

	/**
	 * Ends released leases in one statement, in the background, but those that a thread of
	 * this JVM has taken over meanwhile or now waits for.
	 */
	private void endAll(List<Leased> released) {
		List<Leased> ending = new ArrayList<>(released.size());
		try {
			for (Leased leased : released) {
				// before the reclaim: a release after it queues the lease again
				leased.queued.set(false);
				if (!leased.local.gate.reclaim(leased)
						|| (leased.isCertainlyHeld() && leased.local.gate.handOn(leased))) {
					exit(leased.lease.key(), leased.local);
				}
				else {
					leased.released = true;
					this.renewing.remove(leased);
					ending.add(leased);
				}
			}
			if (!ending.isEmpty()) {
				endInDatabase(ending);
			}
		}
		finally {
			for (Leased leased : ending) {
				leased.local.gate.leave();
				exit(leased.lease.key(), leased.local);
			}
		}
	}

	private void endInDatabase(List<Leased> ending) {
		List<Lease> leases = new ArrayList<>(ending.size());
		for (Leased leased : ending) {
			leases.add(leased.lease);
		}
		try {
			int held = this.repository.releaseAll(leases);
			if (held < leases.size()) {
				logger.warn((leases.size() - held) + " of " + leases.size()
						+ " leases released were gone from the database when their rows were deleted: " + leases);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + leases.size() + " locks; they stay taken until their leases end: "
					+ leases, ex);
		}
	}

	/**
	 * The next hold of a lease handed on by the previous local holder, if this request can
	 * use it: as it is, or extended to the request's lease with one statement.
	 */
	private @Nullable Hold takeOver(@Nullable Leased handedOn, LockRequest request) {
		if (handedOn == null) {
			return null;
		}
		if (handedOn.isCertainlyHeld() && request.minimumHold().isZero()) {
			if (request.renewed() && handedOn.renewed && request.lease().equals(handedOn.duration)) {
				return new Hold(handedOn, request, ++handedOn.handoffs);
			}
			Leased extended = extend(handedOn, request);
			if (extended != null) {
				return new Hold(extended, request, extended.handoffs);
			}
		}
		end(handedOn, Duration.ZERO);
		return null;
	}

	/** The lease extended to the request's, as a new local lease, or {@code null} if it could not be. */
	private @Nullable Leased extend(Leased handedOn, LockRequest request) {
		synchronized (handedOn) {
			// from now on the watchdog leaves the row alone: a renewal of the old lease must not follow this update
			handedOn.released = true;
			this.renewing.remove(handedOn);
		}
		long sentAt = System.nanoTime();
		Optional<Instant> renewed;
		try {
			renewed = this.repository.renew(handedOn.lease, request.lease());
		}
		catch (RuntimeException ex) {
			logger.debug("Could not extend lock '" + handedOn.lease.key() + "' handed on; releasing it", ex);
			return null;
		}
		if (renewed.isEmpty()) {
			return null;
		}
		Lease lease = handedOn.lease;
		Leased extended = new Leased(handedOn.local, new Lease(lease.key(), lease.owner(), lease.token(), renewed.get()),
				request, sentAt);
		extended.handoffs = handedOn.handoffs + 1;
		if (request.renewed()) {
			watch(extended, renewalPeriod(request));
		}
		return extended;
	}

	/** Ends a lease in the database. */
	private void end(Leased leased, Duration minimumHold) {
		leased.released = true;
		this.renewing.remove(leased);
		Lease lease = leased.lease;
		try {
			if (!this.repository.release(lease, minimumHold)) {
				lost(leased, "its row was gone or another owner's when released (its lease ended at "
						+ leased.expiresAt + ")");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release lock '" + lease.key() + "' (owner " + lease.owner()
					+ "); it stays taken until its lease ends at " + leased.expiresAt, ex);
		}
	}

	/** Threads of this JVM that want one key: the gate admits one to the database. */
	private static final class LocalKey {

		final LocalGate<Leased> gate = new LocalGate<>();

		/** Changed only inside the engine map's compute, which serializes it. */
		int users;

		volatile @Nullable Hold hold;

	}

	/**
	 * A lease in the database: held by one local acquisition after another while local
	 * waiters hand it on, renewed by the watchdog if asked.
	 */
	private static final class Leased {

		final LocalKey local;

		final Lease lease;

		final Duration duration;

		/** Whether the watchdog renews it. */
		final boolean renewed;

		volatile Instant expiresAt;

		/** System.nanoTime() before which the lease cannot have ended: sent time plus lease. */
		volatile long localDeadline;

		volatile @Nullable Instant lostSince;

		/** Watchdog state: how often, and when next, to renew. */
		volatile long renewalPeriod;

		volatile long nextRenewal;

		volatile boolean released;

		/** Whether the background thread has yet to come to this lease. */
		final AtomicBoolean queued = new AtomicBoolean();

		/** Local holders after the first; changed only by the thread that passed the gate. */
		volatile int handoffs;

		Leased(LocalKey local, Lease lease, LockRequest request, long sentAt) {
			this.local = local;
			this.lease = lease;
			this.duration = request.lease();
			this.renewed = request.renewed();
			this.expiresAt = lease.expiresAt();
			this.localDeadline = sentAt + request.lease().toNanos();
		}

		/**
		 * Whether this JVM knows that the lease has not ended: not found lost, within its time
		 * on the local clock, and able to be handed on once more.
		 */
		boolean isCertainlyHeld() {
			return this.lostSince == null && System.nanoTime() - this.localDeadline < 0 && this.handoffs < MAX_HANDOFFS;
		}

	}

	/** One local acquisition of a lease, by one thread, with its reentrant count. */
	private final class Hold {

		final Leased leased;

		final LockRequest request;

		/** Which local holder of the lease this is: 0 for the one that took it from the database. */
		final int sequence;

		final Thread thread = Thread.currentThread();

		final AtomicInteger count = new AtomicInteger();

		Hold(Leased leased, LockRequest request, int sequence) {
			this.leased = leased;
			this.request = request;
			this.sequence = sequence;
		}

		/** Larger than every earlier holder's: the database's token, then the local sequence. */
		long fencingToken() {
			return (this.leased.lease.token() << HANDOFF_BITS) | this.sequence;
		}

		LockHandle reenter() {
			this.count.incrementAndGet();
			return handle();
		}

		/**
		 * Takes the hold once more if it is still held: another thread may have closed its
		 * last handle a moment ago.
		 */
		@Nullable LockHandle reenterIfHeld() {
			for (int held = this.count.get(); held > 0; held = this.count.get()) {
				if (this.count.compareAndSet(held, held + 1)) {
					return handle();
				}
			}
			return null;
		}

		private LockHandle handle() {
			Handle handle = new Handle(this);
			HeldLocks.push(handle);
			return handle;
		}

		void countDown() {
			if (this.count.decrementAndGet() == 0) {
				release(this);
			}
		}

	}

	/** One acquisition's view of a hold: closing it twice counts down once. */
	static final class Handle implements LockHandle {

		private final Hold hold;

		private final AtomicBoolean open = new AtomicBoolean(true);

		Handle(Hold hold) {
			this.hold = hold;
		}

		@Override
		public String key() {
			return this.hold.leased.lease.key();
		}

		@Override
		public long fencingToken() {
			return this.hold.fencingToken();
		}

		@Override
		public Instant expiresAt() {
			return this.hold.leased.expiresAt;
		}

		@Override
		public boolean isHeld() {
			return this.open.get() && this.hold.leased.lostSince == null;
		}

		@Override
		public Optional<Instant> lostSince() {
			return Optional.ofNullable(this.hold.leased.lostSince);
		}

		boolean isOpen() {
			return this.open.get();
		}

		@Override
		public void close() {
			if (this.open.compareAndSet(true, false)) {
				HeldLocks.remove(this);
				this.hold.countDown();
			}
		}

		@Override
		public String toString() {
			return "LockHandle[key=" + key() + ", token=" + fencingToken() + ", expiresAt=" + expiresAt() + "]";
		}

	}

}
