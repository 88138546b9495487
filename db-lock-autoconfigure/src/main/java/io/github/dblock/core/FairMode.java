package io.github.dblock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.FairLockRepository.Ticket;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The fair mode ({@link DbLockMode#FAIR}): a queue table of tickets in the order they
 * arrived at the database; the head of a key's queue whose lease has not ended holds it.
 * <ul>
 * <li>Every acquisition enqueues a ticket of its own (one statement), whose number is its
 * fencing token: the order of the tickets is the order of arrival at the database, across
 * every thread of every JVM.</li>
 * <li>Only the earliest waiting ticket of this JVM asks the database whether it is the
 * head, with {@link Backoff} (starting short again whenever the head has changed), and
 * only while no thread of this JVM holds the key; the
 * other threads of this JVM wait locally, woken when they become the earliest. So the
 * statements that waiting sends grow with the JVMs waiting, not with their threads.</li>
 * <li>A ticket has a lease, renewed while it waits (and while it is held, if the request's
 * lease is renewed), by one statement per lease length for all the tickets of this JVM
 * that are due: a waiter or holder that dies leaves the queue when its lease ends. One
 * that gives up (its wait ran out, or it was interrupted) deletes its ticket at once.</li>
 * <li>The release deletes the ticket (owner and number checked) and returns once it is
 * committed; the next waiter of this JVM then asks at once, one of another JVM at its next
 * attempt.</li>
 * <li>A thread that holds a key takes it again with no statement.</li>
 * </ul>
 */
final class FairMode implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(FairMode.class);

	/** The most tickets renewed by one statement. */
	static final int MAX_BATCH = 128;

	/** How often expired tickets (of waiters and holders that died) are deleted. */
	static final Duration REAP_INTERVAL = Duration.ofMinutes(1);

	private static final int REAP_BATCH = 500;

	private static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final long SHUTDOWN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final FairLockRepository queue;

	private final LockEngineSettings settings;

	private final Events events;

	private final Availability availability;

	private final OwnerIds ownerIds = new OwnerIds();

	private final ConcurrentHashMap<String, FairKey> keys = new ConcurrentHashMap<>();

	/** Tickets whose lease is renewed: waiting, or held with a renewed lease. */
	private final Set<FairTicket> renewing = ConcurrentHashMap.newKeySet();

	private final ScheduledThreadPoolExecutor executor;

	private final AtomicBoolean started = new AtomicBoolean();

	private volatile long tick = Long.MAX_VALUE;

	private @Nullable ScheduledFuture<?> renewal;

	private volatile boolean closed;

	FairMode(FairLockRepository queue, LockEngineSettings settings, Events events) {
		this.queue = queue;
		this.settings = settings;
		this.events = events;
		this.availability = new Availability("fair", queue::unavailable);
		CustomizableThreadFactory threads = new CustomizableThreadFactory("db-lock-fair-");
		threads.setDaemon(true);
		this.executor = new ScheduledThreadPoolExecutor(1, threads);
		this.executor.setRemoveOnCancelPolicy(true);
	}

	/**
	 * Takes a key in arrival order.
	 * @return the handle, or {@code null} if the wait ran out before the key's turn came
	 * @throws InterruptedException if interrupted while waiting (the ticket is deleted)
	 */
	@Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		String key = request.key();
		this.availability.check(key);
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		FairKey local = enter(key);
		boolean kept = false;
		try {
			refuseIfClosed(key);
			FairTicket current = local.holder;
			if (current != null && current.thread == Thread.currentThread()) {
				if (!current.isHeld()) {
					throw new DbLockException("Fair lock '" + key + "' is held by this thread, but its lease "
							+ "ended or was lost; it cannot be taken again before it is released");
				}
				// the hold keeps its own use of the entry
				return current.reenter();
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
			if (this.closed) {
				// taken while the mode shut down: given back, so that nothing of this JVM's stays
				release(held);
				refuseIfClosed(key);
			}
			return held.reenter();
		}
		finally {
			if (!kept) {
				exit(local);
			}
		}
	}

	/** Enqueues, waits for the turn, and returns the ticket held; {@code null} if the wait ran out. */
	private @Nullable FairTicket take(LockRequest request, FairKey local, long deadline) throws InterruptedException {
		boolean waits = !request.waitTime().isZero();
		// checked before any statement: a renewed lease shorter than the renewal interval is refused
		long renewalPeriod = renewalPeriodNanos(request);
		FairTicket ticket = enqueue(request, local, waits, renewalPeriod);
		boolean holding = false;
		try {
			long lastHead = 0;
			boolean first = true;
			for (int attempt = 0;; attempt++) {
				if (this.closed || (!first && deadline - System.nanoTime() <= 0)) {
					return null;
				}
				first = false;
				if (ticket.lostAt != null) {
					// its lease ended while it waited (this JVM stalled): it goes to the back
					leave(ticket, local);
					ticket = enqueue(request, local, waits, renewalPeriod);
					attempt = 0;
				}
				long pause;
				if (local.isPoller(ticket)) {
					long head = head(ticket);
					if (head == ticket.ticket.number()) {
						if (hold(ticket, request, local)) {
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
				LockSupport.parkNanos(this, Math.min(pause, remaining));
				if (Thread.interrupted()) {
					throw new InterruptedException();
				}
			}
		}
		finally {
			if (!holding) {
				leave(ticket, local);
			}
		}
	}

	/**
	 * How often a ticket of the request is renewed: a renewed lease as in the lease mode; a
	 * fixed one, which must last while it waits, at the renewal interval if it is shorter
	 * than the lease, else at a third of the lease.
	 */
	private long renewalPeriodNanos(LockRequest request) {
		if (request.renewed()) {
			return this.settings.renewalPeriod(request.lease()).toNanos();
		}
		Duration interval = this.settings.renewInterval();
		return ((interval != null && interval.compareTo(request.lease()) < 0) ? interval
				: request.lease().dividedBy(3)).toNanos();
	}

	private FairTicket enqueue(LockRequest request, FairKey local, boolean waits, long renewalPeriod) {
		start();
		String owner = this.ownerIds.next();
		long sentAt = System.nanoTime();
		Ticket ticket;
		try {
			ticket = this.queue.enqueue(request.key(), owner, request.lease());
		}
		catch (DataAccessException ex) {
			abandon(request.key(), owner);
			throw new DbLockException("Could not enqueue for fair lock '" + request.key() + "': the database failed ("
					+ ex.getMessage() + ")", ex);
		}
		FairTicket queued = new FairTicket(local, ticket, request, sentAt, renewalPeriod);
		local.add(queued);
		if (waits) {
			watch(queued);
		}
		return queued;
	}

	/** Deletes the ticket an enqueue that failed may have written; it expires after its lease otherwise. */
	private void abandon(String key, String owner) {
		try {
			this.queue.abandon(key, owner);
		}
		catch (DataAccessException ex) {
			logger.warn("Could not delete the ticket a failed enqueue for '" + key + "' may have written; it leaves "
					+ "the queue when its lease ends", ex);
		}
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
	 * Makes the head ticket this JVM's holder: a renewed lease goes on being renewed, a fixed
	 * one is extended to its whole length from now.
	 * @return whether it holds; {@code false} if its fixed lease could not be extended
	 */
	private boolean hold(FairTicket ticket, LockRequest request, FairKey local) {
		if (!request.renewed()) {
			this.renewing.remove(ticket);
			long sentAt = System.nanoTime();
			boolean extended;
			try {
				extended = this.queue.renewAll(List.of(ticket.ticket), request.lease()).get(0);
			}
			catch (DataAccessException ex) {
				throw new DbLockException("Could not acquire fair lock '" + ticket.ticket.key()
						+ "': the database failed (" + ex.getMessage() + ")", ex);
			}
			if (!extended) {
				ticket.lost("it was no longer in the queue when its lease was extended", false);
				return false;
			}
			ticket.localDeadline = sentAt + request.lease().toNanos();
		}
		else if (!this.renewing.contains(ticket)) {
			watch(ticket);
		}
		if (!ticket.isValid()) {
			return false;
		}
		local.promote(ticket);
		return true;
	}

	/** Gives a waiting ticket up: deleted from the queue, then the next local waiter is woken. */
	private void leave(FairTicket ticket, FairKey local) {
		ticket.ended = true;
		this.renewing.remove(ticket);
		try {
			this.queue.leave(ticket.ticket);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not delete the ticket of fair lock '" + ticket.ticket.key() + "'; it leaves the queue "
					+ "when its lease ends", ex);
		}
		finally {
			local.remove(ticket);
		}
	}

	private void release(FairTicket held) {
		if (!held.released.compareAndSet(false, true)) {
			return;
		}
		FairKey local = held.local;
		held.endedBeforeRelease();
		held.ended = true;
		this.renewing.remove(held);
		try {
			if (!this.queue.leave(held.ticket)) {
				held.lost("its ticket was gone when it was released", true);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not delete the ticket of fair lock '" + held.ticket.key() + "'; it leaves the queue when "
					+ "its lease ends", ex);
		}
		finally {
			held.done = true;
			local.released(held);
			exit(local);
			this.events.released(held.ticket.key(), DbLockMode.FAIR, System.nanoTime() - held.startedAt);
		}
	}

	private void start() {
		if (this.started.compareAndSet(false, true)) {
			long reap = REAP_INTERVAL.toNanos();
			this.executor.scheduleWithFixedDelay(() -> never(this::reap), reap, reap, TimeUnit.NANOSECONDS);
		}
	}

	private void watch(FairTicket ticket) {
		long period = ticket.renewalPeriod;
		ticket.nextRenewal = System.nanoTime() + period;
		this.renewing.add(ticket);
		long wanted = Math.max(period / 4, MIN_TICK_NANOS);
		if (wanted < this.tick) {
			synchronized (this) {
				if (wanted < this.tick && !this.executor.isShutdown()) {
					if (this.renewal != null) {
						this.renewal.cancel(false);
					}
					this.tick = wanted;
					this.renewal = this.executor.scheduleWithFixedDelay(() -> never(this::renewDue), wanted, wanted,
							TimeUnit.NANOSECONDS);
				}
			}
		}
	}

	private static void never(Runnable task) {
		try {
			task.run();
		}
		catch (Throwable ex) {
			logger.error("The fair lock's renewal failed; it goes on at its next tick", ex);
		}
	}

	/**
	 * Renews the tickets that are due, those of one lease length together, with those of
	 * that length due within half a period: their renewals fall in step, one statement for
	 * all of them.
	 */
	private void renewDue() {
		Map<Duration, List<FairTicket>> soon = new HashMap<>();
		Set<Duration> due = new java.util.HashSet<>();
		long now = System.nanoTime();
		for (FairTicket ticket : this.renewing) {
			if (ticket.ended || ticket.lostAt != null) {
				this.renewing.remove(ticket);
			}
			else if (ticket.remainingNanos() <= 0) {
				ticket.lost("it was not renewed before its lease ended on the local clock", false);
			}
			else if (now - (ticket.nextRenewal - ticket.renewalPeriod / 2) >= 0) {
				soon.computeIfAbsent(ticket.duration, (duration) -> new ArrayList<>()).add(ticket);
				if (now - ticket.nextRenewal >= 0) {
					due.add(ticket.duration);
				}
			}
		}
		soon.forEach((duration, tickets) -> {
			if (due.contains(duration)) {
				for (int from = 0; from < tickets.size(); from += MAX_BATCH) {
					renew(duration, tickets.subList(from, Math.min(from + MAX_BATCH, tickets.size())));
				}
			}
		});
	}

	private void renew(Duration duration, List<FairTicket> tickets) {
		List<Ticket> numbers = new ArrayList<>(tickets.size());
		tickets.forEach((ticket) -> numbers.add(ticket.ticket));
		long sentAt = System.nanoTime();
		List<Boolean> renewed;
		try {
			renewed = this.queue.renewAll(numbers, duration);
		}
		catch (RuntimeException ex) {
			// tried again at the next tick: they are still due
			logger.warn("Could not renew " + tickets.size() + " fair lock tickets; trying again", ex);
			return;
		}
		for (int i = 0; i < tickets.size(); i++) {
			FairTicket ticket = tickets.get(i);
			if (ticket.ended) {
				continue;
			}
			if (!renewed.get(i)) {
				ticket.lost("its ticket was gone, or its lease had ended, when it was renewed", false);
			}
			else if (ticket.remainingNanos() <= 0) {
				ticket.lost("its renewal came back only after its lease had ended on the local clock", false);
			}
			else {
				ticket.localDeadline = sentAt + duration.toNanos();
				ticket.nextRenewal = sentAt + ticket.renewalPeriod;
			}
		}
	}

	private void reap() {
		try {
			int deleted;
			do {
				deleted = this.queue.deleteExpired(REAP_BATCH);
			}
			while (deleted == REAP_BATCH);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not delete expired fair lock tickets; trying again at the next run", ex);
		}
	}

	/**
	 * Why the fair mode cannot be used with this database, checked now.
	 * @return the reason, or empty if it can
	 */
	Optional<String> unavailable() {
		return this.availability.now();
	}

	/** Adds the locks held now. */
	void held(List<HeldKey> held, long now) {
		for (FairKey local : this.keys.values()) {
			FairTicket holder = local.holder;
			if (holder != null && !holder.done) {
				held.add(new HeldKey(local.key, DbLockMode.FAIR, holder.thread.getName(),
						Duration.ofNanos(now - holder.startedAt)));
			}
		}
	}

	/** How many threads of this JVM wait for a key. */
	int waiting() {
		int waiting = 0;
		for (FairKey local : this.keys.values()) {
			waiting += local.waiting();
		}
		return waiting;
	}

	private void refuseIfClosed(String key) {
		if (this.closed) {
			throw new DbLockException("Could not acquire fair lock '" + key + "': the lock engine is shut down");
		}
	}

	private FairKey enter(String key) {
		return this.keys.compute(key, (k, local) -> {
			FairKey entered = (local != null) ? local : new FairKey(k);
			entered.users++;
			return entered;
		});
	}

	private void exit(FairKey local) {
		this.keys.computeIfPresent(local.key, (k, current) -> (--current.users == 0) ? null : current);
	}

	/**
	 * Refuses new acquisitions and sends the waiting threads away (their tickets deleted);
	 * gives holders up to {@code grace} to release, then releases what is still held
	 * (marked lost) and stops the renewal.
	 * @param grace how long holders may still work
	 */
	void shutdown(Duration grace) {
		this.closed = true;
		for (FairKey local : this.keys.values()) {
			local.wakeAll();
		}
		long deadline = System.nanoTime() + grace.toNanos();
		while (holding() && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(SHUTDOWN_CHECK_NANOS);
		}
		for (FairKey local : this.keys.values()) {
			FairTicket holder = local.holder;
			if (holder != null) {
				holder.lost("the application shut down while it was held; its ticket is deleted", true);
				release(holder);
			}
		}
		this.executor.shutdownNow();
	}

	private boolean holding() {
		for (FairKey local : this.keys.values()) {
			if (local.holder != null) {
				return true;
			}
		}
		return false;
	}

	@Override
	public void close() {
		shutdown(Duration.ZERO);
	}

	/**
	 * The threads of this JVM that want one key: its holder, and the waiting tickets in
	 * number order, the first of which alone asks the database while there is no holder.
	 */
	private static final class FairKey {

		final String key;

		/** Threads and holds using this entry; guarded by the map. */
		int users;

		/** Guarded by this. */
		private final TreeSet<FairTicket> waiters = new TreeSet<>(
				(a, b) -> Long.compare(a.ticket.number(), b.ticket.number()));

		volatile @Nullable FairTicket holder;

		FairKey(String key) {
			this.key = key;
		}

		synchronized void add(FairTicket ticket) {
			this.waiters.add(ticket);
		}

		/** Whether the ticket is the one to ask the database: no local holder, the earliest waiter. */
		synchronized boolean isPoller(FairTicket ticket) {
			return this.holder == null && !this.waiters.isEmpty() && this.waiters.first() == ticket;
		}

		synchronized boolean busy() {
			return this.holder != null || !this.waiters.isEmpty();
		}

		synchronized int waiting() {
			return this.waiters.size();
		}

		synchronized void promote(FairTicket ticket) {
			this.waiters.remove(ticket);
			this.holder = ticket;
		}

		/** Takes a waiter out; if it was the one asking, the next one asks now. */
		synchronized void remove(FairTicket ticket) {
			boolean first = !this.waiters.isEmpty() && this.waiters.first() == ticket;
			if (this.waiters.remove(ticket) && first) {
				wakeFirst();
			}
		}

		synchronized void released(FairTicket ticket) {
			if (this.holder == ticket) {
				this.holder = null;
				wakeFirst();
			}
		}

		private void wakeFirst() {
			if (this.holder == null && !this.waiters.isEmpty()) {
				LockSupport.unpark(this.waiters.first().thread);
			}
		}

		synchronized void wakeAll() {
			for (FairTicket waiter : this.waiters) {
				LockSupport.unpark(waiter.thread);
			}
		}

	}

	/** A ticket of this JVM: waiting, then held by its thread with a reentrant count. */
	private final class FairTicket implements FairHandle.Hold {

		final FairKey local;

		final Ticket ticket;

		final Thread thread = Thread.currentThread();

		final Duration duration;

		/** When it was enqueued, then when it was taken. */
		volatile long startedAt;

		/** The {@link System#nanoTime()} before which its lease cannot have ended. */
		volatile long localDeadline;

		final long renewalPeriod;

		volatile long nextRenewal;

		volatile @Nullable Instant lostAt;

		/** Given up or released: no statement about it is sent any more. */
		volatile boolean ended;

		volatile boolean done;

		final AtomicBoolean released = new AtomicBoolean();

		private final AtomicInteger count = new AtomicInteger();

		FairTicket(FairKey local, Ticket ticket, LockRequest request, long sentAt, long renewalPeriod) {
			this.local = local;
			this.renewalPeriod = renewalPeriod;
			this.ticket = ticket;
			this.duration = request.lease();
			this.startedAt = sentAt;
			this.localDeadline = sentAt + request.lease().toNanos();
		}

		LockHandle reenter() {
			this.count.incrementAndGet();
			return new FairHandle(this);
		}

		long remainingNanos() {
			return this.localDeadline - System.nanoTime();
		}

		boolean isValid() {
			return this.lostAt == null && !this.ended && remainingNanos() > 0;
		}

		/** Marks it lost, once, unless ended (or {@code evenIfEnded}): for a holder, an ERROR. */
		void lost(String why, boolean evenIfEnded) {
			Instant now = Instant.now();
			synchronized (this) {
				if (this.lostAt != null || (this.ended && !evenIfEnded)) {
					return;
				}
				this.lostAt = now;
			}
			if (this.local.holder == this) {
				logger.error("Lost fair lock '" + this.ticket.key() + "' (owner " + this.ticket.owner() + ", ticket "
						+ this.ticket.number() + ") at " + now + ": " + why + "; another owner may hold it now");
				FairMode.this.events.lost(this.ticket.key(), DbLockMode.FAIR);
			}
			else {
				logger.warn("A waiter for fair lock '" + this.ticket.key() + "' (ticket " + this.ticket.number()
						+ ") dropped out of the queue: " + why + "; it enqueues again");
				LockSupport.unpark(this.thread);
			}
		}

		/** Marks a holder whose lease ended on the local clock before its release as lost then. */
		void endedBeforeRelease() {
			Instant end = expiresAt();
			synchronized (this) {
				if (this.lostAt != null || remainingNanos() > 0) {
					return;
				}
				this.lostAt = end;
			}
			FairMode.this.events.lost(this.ticket.key(), DbLockMode.FAIR);
			logger.warn("Fair lock '" + this.ticket.key() + "' was released after its lease ended on the local clock (at "
					+ end + "): another owner may have held it meanwhile");
		}

		@Override
		public String key() {
			return this.ticket.key();
		}

		@Override
		public long token() {
			return this.ticket.number();
		}

		@Override
		public boolean isHeld() {
			return !this.done && isValid();
		}

		@Override
		public Instant expiresAt() {
			return Instant.now().plusNanos(remainingNanos());
		}

		@Override
		public Optional<Instant> lostSince() {
			Instant lost = this.lostAt;
			if (lost == null && !this.done && remainingNanos() <= 0) {
				lost = expiresAt();
			}
			return Optional.ofNullable(lost);
		}

		@Override
		public void countDown() {
			if (this.count.decrementAndGet() == 0) {
				release(this);
			}
		}

	}

}
