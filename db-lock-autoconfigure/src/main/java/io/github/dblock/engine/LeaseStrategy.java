package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockChecks;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The lease mode ({@link DbLockMode#LEASE}, the default): a row with an expiry in database
 * time ({@link LeaseMode}).
 * <ul>
 * <li>A thread that holds a key takes it again with no SQL, as long as this JVM knows its
 * lease is valid (its local deadline: the time the statement that took or last extended it
 * was sent, plus the lease). A re-entry into a lease that may have ended is a fresh
 * acquisition with a new token; the stale outer handle stays lost.</li>
 * <li>Threads of this JVM that want one key queue on a fair local gate ({@link LocalGate}),
 * so that one of them at a time asks the database (with {@link Backoff}) until it acquires
 * or its wait runs out.</li>
 * <li>A released lease passes to the next local waiter without a statement if both are
 * renewed leases of one length, and with one update that extends it otherwise; its fencing
 * token is the database's token shifted left by 16 bits plus the hand-off count, so tokens
 * increase with every acquisition. A JVM passes a key among its threads for at most a local
 * turn ({@link LockEngineSettings#localTurn()}) while another JVM asks for it: then the key
 * goes back to the database and this JVM's next thread holds back until the other JVM had a
 * chance to take it ({@link ReleasePath}, {@link LocalTurn}).</li>
 * <li>A {@link LeaseWatchdog} renews renewed leases; a lease found lost is marked so and
 * logged at ERROR, and a handle is not held once its local deadline has passed.</li>
 * </ul>
 */
final class LeaseStrategy extends AbstractLockStrategy {

	private static final Log logger = LogFactory.getLog(LeaseStrategy.class);

	private final LockEngineSettings settings;

	private final Events events;

	private final LeaseMode mode;

	private final LocalKeys<LocalKey> keys = new LocalKeys<>(LocalKey::new);

	private final LeaseWatchdog watchdog;

	private final ReleasePath releases;

	private final WakeUps wakeUps;

	/** The mode whose keys these are: the lease mode's, or a strategy's built on it. */
	private final DbLockMode lockMode;

	/** What a hold does when its count comes to zero. */
	private final Consumer<Hold> release;

	LeaseStrategy(LockRepository repository, LockEngineSettings settings, Events events, LockScheduler scheduler,
			WakeUps wakeUps) {
		this(repository, settings, events, scheduler, DbLockMode.LEASE, null, wakeUps);
	}

	/**
	 * Creates the lease mode, or the leases of a strategy built on it (the semaphore's
	 * permits), which names its mode and may act around each release.
	 * @param around what runs around each release, after the transaction if there is one,
	 * given the release to run; {@code null} for the release alone
	 * @param wakeUps what wakes the thread that polls for a key another owner released
	 */
	LeaseStrategy(LockRepository repository, LockEngineSettings settings, Events events, LockScheduler scheduler,
			DbLockMode lockMode, @Nullable BiConsumer<Hold, Runnable> around, WakeUps wakeUps) {
		this.settings = settings;
		this.wakeUps = wakeUps;
		wakeUps.onRelease(this::woken);
		this.events = events;
		this.lockMode = lockMode;
		this.mode = new LeaseMode(repository, scheduler);
		this.watchdog = new LeaseWatchdog(this.mode, scheduler);
		this.releases = new ReleasePath(this.mode, this.watchdog, this.keys, settings, events, lockMode);
		this.release = (around != null)
				? (hold) -> hold.releaseAfterTransaction(() -> around.accept(hold, () -> this.releases.releaseNow(hold)))
				: this.releases::release;
	}

	@Override
	public List<DbLockMode> modes() {
		return List.of(this.lockMode);
	}

	/** The turns of this strategy's keys (see {@link LocalTurn}). */
	LocalTurn turn() {
		return this.releases.turn();
	}

	@Override
	public Optional<String> unavailable() {
		return Optional.empty();
	}

	@Override
	public @Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		return acquire(request, true);
	}

	/**
	 * Takes a key.
	 * @param reentrant whether a thread that holds the key takes it again; if not, such a
	 * request returns {@code null} at once, as for a key another owner holds, unless the
	 * thread released it already and its release waits for the thread's transaction, and
	 * the request can use its lease: then it takes it again
	 */
	@Nullable LockHandle acquire(LockRequest request, boolean reentrant) throws InterruptedException {
		String key = request.key();
		long renewalPeriod = request.renewed() ? this.settings.renewalPeriod(request.lease()).toNanos() : 0;
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		LocalKey local = this.keys.enter(key);
		boolean kept = false;
		try {
			refuseIfClosed(key);
			Hold current = local.hold;
			if (current != null && current.thread == Thread.currentThread() && current.isActive()) {
				if (!reentrant && (!current.isDeferredOnly() || reentry(current.lease, request) == Reentry.REFUSE)) {
					return null;
				}
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
				if (isClosed()) {
					HeldLease handedOn = passage.handedOn();
					if (handedOn != null) {
						this.releases.end(handedOn, Duration.ZERO);
					}
					refuseIfClosed(key);
				}
				hold = takeOver(passage.handedOn(), request, renewalPeriod);
				if (hold == null) {
					// woken by the engine's shutdown too
					boolean heldBack;
					local.polling = Thread.currentThread();
					try {
						heldBack = holdBack(passage.holdBackUntil(), deadline);
					}
					finally {
						local.polling = null;
					}
					hold = heldBack ? poll(request, local, deadline, renewalPeriod) : null;
				}
			}
			catch (InterruptedException | RuntimeException ex) {
				local.gate.leave(holdBackLeft(passage.holdBackUntil()));
				throw ex;
			}
			if (hold == null) {
				// the next local waiter holds back for the rest of a hold-back this thread gave up in
				local.gate.leave(holdBackLeft(passage.holdBackUntil()));
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
	 * Takes again the key the current thread released inside its transaction, whose release
	 * waits for the transaction to complete; no other thread can have it meanwhile.
	 * @param request the request, with no wait
	 * @return the handle, or {@code null} if the thread has no such hold of the key, or one
	 * this request cannot use
	 */
	@Nullable LockHandle retakeDeferred(LockRequest request) throws InterruptedException {
		LocalKey local = this.keys.enter(request.key());
		try {
			Hold current = local.hold;
			if (current == null || current.thread != Thread.currentThread() || !current.isDeferredOnly()) {
				return null;
			}
		}
		finally {
			this.keys.exit(local);
		}
		return acquire(request, false);
	}

	@Override
	public void held(List<HeldKey> held, long now) {
		for (LocalKey local : this.keys.inUse()) {
			Hold hold = local.hold;
			if (hold != null && !hold.done) {
				held.add(new HeldKey(local.key, this.lockMode, hold.thread.getName(),
						Duration.ofNanos(now - hold.startedAt)));
			}
		}
	}

	@Override
	public void waiting(List<WaitingKey> waiting) {
		for (LocalKey local : this.keys.inUse()) {
			add(waiting, local.key, this.lockMode, local.gate.queued());
		}
	}

	/**
	 * How far behind its schedule the watchdog is now.
	 * @return the lag
	 */
	Duration watchdogLag() {
		return this.watchdog.lag();
	}

	@Override
	protected void wakeWaiters() {
		for (LocalKey local : this.keys.inUse()) {
			local.gate.refuseWaiters();
			Thread polling = local.polling;
			if (polling != null) {
				LockSupport.unpark(polling);
			}
		}
	}

	/**
	 * Another owner released a key that a refused attempt of this JVM had marked as wanted
	 * ({@link WakeUps}): the thread that polls for it, if one does, asks again at once.
	 * @param key the stored key
	 */
	private void woken(String key) {
		LocalKey local = this.keys.find(key);
		if (local != null) {
			local.wakeUps++;
			Thread polling = local.polling;
			if (polling != null) {
				LockSupport.unpark(polling);
			}
		}
	}

	@Override
	protected boolean holding() {
		for (LocalKey local : this.keys.inUse()) {
			if (local.hold != null) {
				return true;
			}
		}
		return false;
	}

	@Override
	protected void endHolds() {
		for (LocalKey local : this.keys.inUse()) {
			Hold hold = local.hold;
			if (hold != null) {
				hold.lease.lost("the application shut down while it was held; its row is deleted");
				this.releases.end(hold.lease, Duration.ZERO);
			}
		}
	}

	@Override
	protected void stop() {
		this.watchdog.close();
		this.mode.close();
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
					+ LockChecks.format(lease.duration) + "; it cannot be taken again with a renewed lease. Take it with a renewed lease "
					+ "outside, or with a fixed lease inside");
			case STALE -> {
			}
		}
		lease.lost("its thread asked for it again after its lease may have ended");
		this.releases.end(lease, Duration.ZERO);
		return null;
	}

	private Reentry reentry(HeldLease lease, LockRequest request) {
		return Reentry.of(lease.isValid(), lease.renewed, lease.remainingNanos(), request);
	}

	private @Nullable Hold poll(LockRequest request, LocalKey local, long deadline, long renewalPeriod)
			throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			if (isClosed()) {
				return null;
			}
			// a release told from the moment the attempt is sent ends the pause after it
			int wakeUps = local.wakeUps;
			long sentAt = System.nanoTime();
			Lease acquired = this.mode.acquire(request);
			if (acquired != null) {
				HeldLease lease = new HeldLease(local, acquired, request, sentAt, this.events);
				if (isClosed()) {
					// taken while the engine shut down: given back, so that nothing of this JVM's stays
					this.releases.end(lease, Duration.ZERO);
					return null;
				}
				if (request.renewed()) {
					this.watchdog.watch(lease, renewalPeriod);
				}
				return new Hold(lease, request, 0, this.release);
			}
			if (deadline - System.nanoTime() <= 0 || isClosed()) {
				return null;
			}
			this.events.contended(request.key(), this.lockMode);
			this.wakeUps.refused();
			local.polling = Thread.currentThread();
			try {
				if (!pause(this.settings.backoff(), attempt, deadline, () -> local.wakeUps != wakeUps)) {
					return null;
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
				return new Hold(handedOn, request, handoff, this.release);
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
