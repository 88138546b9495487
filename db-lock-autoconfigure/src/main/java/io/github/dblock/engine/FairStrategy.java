package io.github.dblock.engine;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockChecks;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.FairLockRepository.Enqueued;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * The fair mode ({@link DbLockMode#FAIR}): a queue table of tickets in the order they
 * arrived at the database; the head of a key's queue whose lease has not ended holds it.
 * <ul>
 * <li>Every acquisition enqueues a ticket of its own (one statement), whose number is its
 * fencing token: the order of the tickets is the order of arrival at the database, across
 * every thread of every JVM.</li>
 * <li>Only the earliest waiting ticket of this JVM asks the database whether it is the
 * head, with {@link Backoff} (starting short again whenever the head has changed), and
 * only while no thread of this JVM holds the key; the other threads of this JVM wait
 * locally ({@link FairKey}), woken when they become the earliest. So the statements that
 * waiting sends grow with the JVMs waiting, not with their threads. Where the database
 * tells releases ({@link WakeUps}, PostgreSQL), the earliest waiter asks again as soon as
 * the ticket at the head of its key's queue leaves it followed by another engine's ticket,
 * instead of at the end of its pause (a hint: a wake-up missed costs one pause).</li>
 * <li>A ticket has a lease, renewed while it waits (and while it is held, if the request's
 * lease is renewed), by one statement per lease length for all the tickets of this JVM
 * that are due ({@link FairRenewal}): a waiter or holder that dies leaves the queue when
 * its lease ends; one that gives up (its wait ran out, or it was interrupted) deletes its
 * ticket at once.</li>
 * <li>A fixed lease counts from the acquisition: it is extended to its whole length when
 * its ticket becomes the head after a pause (one statement); one taken at the first look
 * after its enqueue, with nine tenths of it left, counts from the enqueue, as the lease
 * mode's counts from its insert.</li>
 * <li>The release ({@link FairRelease}) deletes the ticket (owner and number checked) and
 * returns once it is committed; the next waiter of this JVM then asks at once, one of
 * another JVM when told of the release, or at its next attempt. If the next ticket in the
 * queue is this JVM's earliest waiter's (one read, before the delete), the key is handed
 * to that thread at once and it takes it with no statement, even if its wait has just run
 * out.</li>
 * <li>A thread that holds a key takes it again with no statement.</li>
 * <li>A ticket whose last handle is closed inside a transaction is released when the
 * transaction completes, as in the lease mode ({@link CountedHold}).</li>
 * </ul>
 */
final class FairStrategy extends AbstractLockStrategy {

	private static final Log logger = LogFactory.getLog(FairStrategy.class);

	private final FairLockRepository queue;

	private final LockEngineSettings settings;

	private final Events events;

	private final Availability availability;

	private final OwnerIds ownerIds = new OwnerIds();

	private final LocalKeys<FairKey> keys = new LocalKeys<>(FairKey::new);

	private final FairRenewal renewal;

	private final WakeUps wakeUps;

	private final FairRelease releases;

	/** The tickets that failed enqueues may have written. */
	private final Orphans orphans;

	/**
	 * Creates the fair mode.
	 * @param wakeUps what wakes the earliest waiter of a key whose head left the queue; the
	 * engine closes it
	 */
	FairStrategy(FairLockRepository queue, LockEngineSettings settings, Events events, LockScheduler scheduler,
			WakeUps wakeUps) {
		this.queue = queue;
		this.wakeUps = wakeUps;
		wakeUps.onRelease(this::woken);
		this.orphans = new Orphans("tickets", queue::abandonAll, scheduler);
		this.settings = settings;
		this.events = events;
		this.availability = new Availability("fair", queue::unavailable);
		this.renewal = new FairRenewal(queue, scheduler);
		this.releases = new FairRelease(queue, this.renewal, this.keys, events, this::isClosed);
	}

	/**
	 * Takes a key in arrival order.
	 * @return the handle, or {@code null} if the wait ran out before the key's turn came
	 * @throws InterruptedException if interrupted while waiting (the ticket is deleted)
	 */
	@Override
	public List<DbLockMode> modes() {
		return List.of(DbLockMode.FAIR);
	}

	@Override
	public @Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		String key = request.key();
		this.availability.check(key);
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		FairKey local = this.keys.enter(key);
		boolean kept = false;
		try {
			refuseIfClosed(key);
			FairTicket current = local.holder;
			if (current != null && current.thread == Thread.currentThread() && current.isCountedOrDeferred()) {
				// the hold keeps its own use of the entry; one whose release waits for the transaction is taken again
				LockHandle again = reenter(current, request);
				if (again != null) {
					return again;
				}
				// its lease may have ended: it was ended, and the key is asked for afresh
			}
			if (request.waitTime().isZero() && local.busy()) {
				// a thread of this JVM holds the key or waits for it: no need to ask
				return null;
			}
			FairTicket held = take(request, local, deadline);
			if (held == null) {
				refuseIfClosed(key);
				return null;
			}
			kept = true;
			if (isClosed()) {
				// taken while the mode shut down: given back, so that nothing of this JVM's stays
				this.releases.releaseQuietly(held);
				refuseIfClosed(key);
			}
			return held.reenter();
		}
		finally {
			if (!kept) {
				this.keys.exit(local);
			}
		}
	}

	/**
	 * The current thread's ticket once more, as the lease mode decides ({@link Reentry}): as it
	 * is, its fixed lease extended, or refused; {@code null} if its lease may have ended (it is
	 * then marked lost and ended).
	 */
	private @Nullable LockHandle reenter(FairTicket current, LockRequest request) {
		switch (Reentry.of(current.isHeld(), current.renewed, current.remainingNanos(), request)) {
			case REENTER -> {
				return current.reenterIfHeld();
			}
			case EXTEND -> {
				if (extendFixedLease(current, request)) {
					return current.reenterIfHeld();
				}
			}
			case REFUSE -> throw new DbLockException("Fair lock '" + request.key() + "' is held by this thread with a fixed "
					+ "lease of " + LockChecks.format(current.duration) + "; it cannot be taken again with a renewed lease. "
					+ "Take it with a renewed lease outside, or with a fixed lease inside");
			case STALE -> {
			}
		}
		current.lost("its thread asked for it again after its lease may have ended", false);
		this.releases.releaseQuietly(current);
		return null;
	}

	/** Enqueues, waits for the turn, and returns the ticket held; {@code null} if the wait ran out. */
	private @Nullable FairTicket take(LockRequest request, FairKey local, long deadline) throws InterruptedException {
		boolean waits = !request.waitTime().isZero();
		// checked before any statement: a renewed lease shorter than the renewal interval is refused
		long renewalPeriod = this.settings.ticketRenewalPeriod(request).toNanos();
		FairTicket ticket = enqueue(request, local, waits, renewalPeriod);
		boolean holding = false;
		try {
			long lastHead = 0;
			boolean first = true;
			// whether it has paused since its enqueue: a fixed lease then counts from its hold, not the enqueue
			boolean paused = false;
			for (int attempt = 0;; attempt++) {
				if (isClosed()) {
					return null;
				}
				if (local.holder == ticket && ticket.lostAt == null) {
					// handed on by this JVM's previous holder (its ticket is the next in the queue),
					// taken even if the wait has just run out
					if (hold(ticket, request, local, false)) {
						holding = true;
						return ticket;
					}
					ticket.lost("its lease ended before it could hold the key", false);
					continue;
				}
				if (!first && deadline - System.nanoTime() <= 0) {
					return null;
				}
				first = false;
				if (ticket.lostAt != null) {
					// its lease ended while it waited (this JVM stalled): it goes to the back
					leave(ticket, local);
					ticket = enqueue(request, local, waits, renewalPeriod);
					attempt = 0;
					paused = false;
				}
				long pause;
				if (local.isPoller(ticket)) {
					// the look its enqueue took, if any, is fresh at the first look: no pause since
					long head = (ticket.enqueueLook != Enqueued.NOT_LOOKED && !paused) ? ticket.enqueueLook : head(ticket);
					ticket.enqueueLook = Enqueued.NOT_LOOKED;
					if (head == ticket.ticket.number()) {
						if (hold(ticket, request, local, !paused)) {
							holding = true;
							return ticket;
						}
						ticket.lost("its lease ended before it could hold the key", false);
						continue;
					}
					if (head == 0) {
						ticket.lost("it was no longer in the queue when it asked for its turn", false);
						continue;
					}
					if (head != lastHead) {
						// the queue moved: the next release may be near, so the pauses start short again
						attempt = 0;
						lastHead = head;
					}
					pause = this.settings.backoff().delayNanos(attempt);
					// told when the head leaves: an unpark from then on ends the pause
					this.wakeUps.refused();
				}
				else {
					// woken when it becomes this JVM's earliest waiter
					pause = Long.MAX_VALUE;
					attempt = -1;
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					return null;
				}
				paused = true;
				park(Math.min(pause, remaining));
			}
		}
		finally {
			if (!holding) {
				leave(ticket, local);
			}
		}
	}

	private FairTicket enqueue(LockRequest request, FairKey local, boolean waits, long renewalPeriod) {
		String owner = this.ownerIds.next();
		long sentAt = System.nanoTime();
		// a look at the head only where it would be used: no thread of this JVM holds the key or waits for it
		boolean look = !local.busy();
		Enqueued enqueued;
		try {
			enqueued = look ? this.queue.enqueueAndLook(request.key(), owner, request.lease())
					: new Enqueued(this.queue.enqueue(request.key(), owner, request.lease()), Enqueued.NOT_LOOKED);
		}
		catch (DataAccessException ex) {
			// the statement may have committed, or commit later: a ticket at the queue's head would block it
			this.orphans.abandon(request.key(), owner, request.lease());
			throw new DbLockException("Could not enqueue for fair lock '" + request.key() + "': the database failed ("
					+ ex.getMessage() + ")", ex);
		}
		FairTicket queued = new FairTicket(local, enqueued.ticket(), request, sentAt, renewalPeriod, this.events,
				this.releases::release);
		queued.enqueueLook = enqueued.head();
		local.add(queued);
		if (waits) {
			this.renewal.watch(queued);
		}
		return queued;
	}

	private long head(FairTicket ticket) {
		try {
			return this.queue.head(ticket.ticket);
		}
		catch (DataAccessException ex) {
			throw new DbLockException("Could not acquire fair lock '" + ticket.ticket.key() + "': the database failed ("
					+ ex.getMessage() + ")", ex);
		}
	}

	/**
	 * Makes the head ticket this JVM's holder: a renewed lease goes on being renewed; a fixed
	 * one is extended to its whole length from now (one statement), unless the ticket is the
	 * head at its first look, right after its enqueue, with at least nine tenths of its lease
	 * left: its lease, the request's whole length from the enqueue (or from its last renewal
	 * while it waited), then counts from the acquisition's first statement, as the lease
	 * mode's counts from its insert.
	 * @param firstLook whether the ticket is the head at its first look after its enqueue,
	 * with no pause between them
	 * @return whether it holds; {@code false} if its fixed lease could not be extended
	 */
	private boolean hold(FairTicket ticket, LockRequest request, FairKey local, boolean firstLook) {
		if (!request.renewed()) {
			this.renewal.unwatch(ticket);
			boolean leaseKept = firstLook && ticket.remainingNanos() >= request.lease().toNanos() / 10 * 9;
			if (!leaseKept && !extendFixedLease(ticket, request)) {
				ticket.lost("it was no longer in the queue when its lease was extended", false);
				return false;
			}
		}
		else if (!this.renewal.isWatched(ticket)) {
			this.renewal.watch(ticket);
		}
		if (!ticket.isValid()) {
			return false;
		}
		ticket.startedAt = System.nanoTime();
		local.promote(ticket);
		ticket.holding = true;
		this.events.holdStarted(ticket.ticket.key(), DbLockMode.FAIR, ticket.ticket.owner(), ticket.ticket.number());
		return true;
	}

	/**
	 * Extends a ticket's lease to the request's whole length from now (one statement).
	 * @return whether it was still in the queue
	 */
	private boolean extendFixedLease(FairTicket ticket, LockRequest request) {
		long extensions = ticket.extending();
		long sentAt = System.nanoTime();
		boolean extended;
		try {
			extended = this.queue.renewAll(List.of(ticket.ticket), request.lease()).get(0);
		}
		catch (DataAccessException ex) {
			throw new DbLockException("Could not acquire fair lock '" + ticket.ticket.key() + "': the database failed ("
					+ ex.getMessage() + ")", ex);
		}
		if (extended) {
			ticket.extended(extensions, sentAt, request.lease());
		}
		return extended;
	}

	/**
	 * The ticket at the head of a key's queue left it, followed by another engine's, told by the
	 * database ({@link WakeUps}): this JVM's earliest waiter, if it asks the database, asks
	 * again at once.
	 * @param key the key
	 */
	private void woken(String key) {
		FairKey local = this.keys.find(key);
		if (local != null) {
			local.woken();
		}
	}

	/** Gives a waiting ticket up: deleted from the queue, then the next local waiter is woken. */
	private void leave(FairTicket ticket, FairKey local) {
		ticket.ended = true;
		this.renewal.unwatch(ticket);
		try {
			this.queue.leave(ticket.ticket);
		}
		catch (RuntimeException ex) {
			// ahead of later tickets until deleted: deleted off this thread, again until its lease would have ended
			logger.debug("Could not delete the ticket of fair lock '" + ticket.ticket.key() + "'; trying again", ex);
			this.orphans.abandon(ticket.ticket.key(), ticket.ticket.owner(), ticket.duration);
		}
		finally {
			local.remove(ticket);
		}
	}

	@Override
	public Optional<String> unavailable() {
		return this.availability.now();
	}

	@Override
	public void held(List<HeldKey> held, long now) {
		for (FairKey local : this.keys.inUse()) {
			FairTicket holder = local.holder;
			if (holder != null && holder.holding && !holder.done) {
				held.add(new HeldKey(local.key, DbLockMode.FAIR, holder.thread.getName(),
						Duration.ofNanos(now - holder.startedAt)));
			}
		}
	}

	@Override
	public void waiting(List<WaitingKey> waiting) {
		for (FairKey local : this.keys.inUse()) {
			add(waiting, local.key, DbLockMode.FAIR, local.waiting());
		}
	}

	/** Sends the waiting threads away: their tickets are deleted. */
	@Override
	protected void wakeWaiters() {
		for (FairKey local : this.keys.inUse()) {
			local.wakeAll();
		}
	}

	@Override
	protected boolean holding() {
		for (FairKey local : this.keys.inUse()) {
			if (local.holder != null) {
				return true;
			}
		}
		return false;
	}

	@Override
	protected void endHolds() {
		for (FairKey local : this.keys.inUse()) {
			FairTicket holder = local.holder;
			// one handed on but not yet taken is left to its thread, which sees the shutdown and leaves
			if (holder != null && holder.holding) {
				holder.lost("the application shut down while it was held; its ticket is deleted", true);
				this.releases.releaseQuietly(holder);
			}
		}
	}

	@Override
	protected void stop() {
		this.renewal.close();
		this.orphans.close();
	}

}
