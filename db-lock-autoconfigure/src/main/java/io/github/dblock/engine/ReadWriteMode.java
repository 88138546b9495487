package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;
import io.github.dblock.LockUpgradeException;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository.WriteAttempt;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The read/write modes ({@link DbLockMode#READ}, {@link DbLockMode#WRITE}): every
 * acquisition is a holder row of its own with its own lease and token, renewed by a
 * {@link LeaseWatchdog} of its own like the lease mode's, and marked lost the same way.
 * <ul>
 * <li>A reader polls (with {@link Backoff}) until no writer holds the key or waits for it; a
 * writer polls until no one holds it, its intent renewed by every attempt and withdrawn when
 * it gives up, so that readers that keep coming cannot starve it.</li>
 * <li>A thread that holds a key reads or writes it again with no statement (a writer's read
 * is counted on its write hold); a reader that asks to write is refused with a
 * {@link LockUpgradeException}.</li>
 * <li>A hold whose last handle is closed inside a transaction is released when the
 * transaction completes, as in the lease mode.</li>
 * </ul>
 * Writers of one JVM queue locally for a key (a fair permit, kept while the key is held), so
 * that one of them at a time asks the database; readers each ask it, as each is a holder
 * row of its own. A writer that passes the key to the next local writer leaves it its intent
 * (ended, with the mark of another owner's refused attempt); at the end of a local turn, if
 * another owner (a reader, or another JVM's writer) wants the key, the writer cedes it and
 * the next local writer holds back, as in the lease mode ({@link LocalTurn}), so that
 * another JVM gets the key within its wait.
 */
final class ReadWriteMode implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ReadWriteMode.class);

	private static final long SHUTDOWN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final ReadWriteLockRepository repository;

	private final LockEngineSettings settings;

	private final Events events;

	private final OwnerIds ownerIds = new OwnerIds();

	private final LeaseWatchdog watchdog;

	private final LocalTurn turn;

	/** What failed attempts may have written (a holder's row, a writer's intent), withdrawn until it cannot land. */
	private final Orphans orphans;

	/** The holds of this JVM, by key and thread. */
	private final ConcurrentHashMap<ThreadKey, ReadWriteHold> holds = new ConcurrentHashMap<>();

	/** The owner ids of the writers held now, whose renewal renews their intent too. */
	private final Set<String> writers = ConcurrentHashMap.newKeySet();

	/** The writers of this JVM by key: one at a time asks the database or holds the key. */
	private final ConcurrentHashMap<String, LocalWriters> localWriters = new ConcurrentHashMap<>();

	private final Availability availability;

	private volatile boolean closed;

	ReadWriteMode(ReadWriteLockRepository repository, LockEngineSettings settings, Events events, LockScheduler scheduler) {
		this.repository = repository;
		this.orphans = new Orphans("rows and intents", this::withdrawAll, scheduler);
		this.settings = settings;
		this.events = events;
		Renewals renewals = new Renewals();
		this.watchdog = new LeaseWatchdog(renewals, scheduler);
		this.turn = new LocalTurn(renewals, this.watchdog, settings, events);
		this.availability = new Availability("read/write", repository::unavailable);
	}

	/**
	 * Why the read/write modes cannot be used with this database, checked now.
	 * @return the reason, or empty if they can
	 */
	Optional<String> unavailable() {
		return this.availability.now();
	}

	/**
	 * Takes a key for reading or writing, as the request's mode says.
	 * @return the handle, or {@code null} if the key stayed taken for the whole wait
	 * @throws LockUpgradeException if the thread holds the key for reading and asks to write
	 */
	@Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		String key = request.key();
		boolean write = request.mode() == DbLockMode.WRITE;
		ThreadKey threadKey = new ThreadKey(key, Thread.currentThread());
		ReadWriteHold current = this.holds.get(threadKey);
		if (current != null && current.hold.isActive()) {
			if (write && !current.writer) {
				throw new LockUpgradeException(key);
			}
			if (!current.hold.lease.isValid()) {
				throw new DbLockException("Lock '" + key + "' is held by this thread, but its lease may have ended (at "
						+ current.hold.lease.deadlineInstant() + "); it cannot be taken again before it is released");
			}
			LockHandle again = current.hold.reenterIfHeld();
			if (again != null) {
				return again;
			}
		}
		refuseIfClosed(key);
		this.availability.check(key);
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		Taken taken = write ? write(request, deadline) : read(request, deadline);
		if (taken == null) {
			refuseIfClosed(key);
			return null;
		}
		HeldLease lease = new HeldLease(new LocalKey(key), taken.lease(), request, taken.sentAt(), this.events);
		if (write) {
			this.writers.add(taken.lease().owner());
		}
		ReadWriteHold held = new ReadWriteHold(threadKey, write, lease, request, taken.local());
		Hold hold = held.hold;
		this.holds.put(threadKey, held);
		if (this.closed) {
			// taken while the engine shut down: given back, so that nothing of this JVM's stays
			try {
				end(held);
			}
			catch (LockReleaseException ex) {
				logger.warn(ex.getMessage(), ex.getCause());
			}
			refuseIfClosed(key);
		}
		if (request.renewed()) {
			this.watchdog.watch(lease, this.settings.renewalPeriod(request.lease()).toNanos());
		}
		return hold.reenter();
	}

	private @Nullable Taken read(LockRequest request, long deadline) throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			if (this.closed) {
				return null;
			}
			// a fresh owner per attempt: a row left by a failed attempt never blocks the next
			String owner = this.ownerIds.next();
			long sentAt = System.nanoTime();
			Lease lease;
			try {
				lease = this.repository.tryRead(request.key(), owner, request.lease()).orElse(null);
			}
			catch (DataAccessException ex) {
				if (!(ex instanceof CannotGetJdbcConnectionException)) {
					// the statement was sent: the database may have committed the reader's row, or commit it later
					this.orphans.abandon(request.key(), owner, request.lease());
				}
				throw failed(request, ex);
			}
			if (lease != null) {
				return new Taken(lease, sentAt, null);
			}
			if (!pause(attempt, deadline)) {
				return null;
			}
		}
	}

	/**
	 * Takes the key for writing: first the turn among this JVM's writers of the key (so that
	 * one of them at a time polls the database), then the key; the turn is kept while the key
	 * is held.
	 */
	private @Nullable Taken write(LockRequest request, long deadline) throws InterruptedException {
		LocalWriters local = enterWriters(request.key());
		boolean turn = false;
		Taken taken = null;
		try {
			turn = local.permit.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			if (turn) {
				holdBack(local.holdBackUntil, deadline);
				taken = writeInTurn(request, deadline, local);
				if (taken != null && local.turnStart == 0) {
					local.turnStart = taken.sentAt();
				}
			}
			return taken;
		}
		finally {
			if (taken == null) {
				if (turn) {
					local.permit.release();
				}
				exitWriters(local);
			}
		}
	}

	private @Nullable Taken writeInTurn(LockRequest request, long deadline, LocalWriters local)
			throws InterruptedException {
		String owner = this.ownerIds.next();
		boolean again = false;
		boolean taken = false;
		try {
			for (int attempt = 0;; attempt++) {
				if (this.closed) {
					return null;
				}
				long sentAt = System.nanoTime();
				WriteAttempt result;
				try {
					result = this.repository.tryWrite(request.key(), owner, request.lease(), again);
				}
				catch (DataAccessException ex) {
					// withdrawn below: its intent, and its row if the insert committed; and again
					// until the statement can no longer commit
					if (!(ex instanceof CannotGetJdbcConnectionException)) {
						this.orphans.abandon(request.key(), owner, request.lease());
					}
					throw failed(request, ex);
				}
				if (result.lease() != null) {
					taken = true;
					return new Taken(result.lease(), sentAt, local);
				}
				again = result.intent();
				if (!pause(attempt, deadline)) {
					return null;
				}
			}
		}
		finally {
			if (!taken) {
				withdraw(request.key(), owner, request.lease());
			}
		}
	}

	/**
	 * Waits until {@code until} (0 for not at all) or the deadline, whichever is first: after
	 * a cede, so that the other owner's next attempt comes first.
	 */
	private void holdBack(long until, long deadline) throws InterruptedException {
		if (until == 0) {
			return;
		}
		for (long now = System.nanoTime(); now - until < 0 && now - deadline < 0 && !this.closed; now = System.nanoTime()) {
			LockSupport.parkNanos(this, Math.min(until - now, deadline - now));
			if (Thread.interrupted()) {
				throw new InterruptedException();
			}
		}
	}

	/** Waits before the next attempt; {@code false} if the wait ran out or the mode shut down. */
	private boolean pause(int attempt, long deadline) throws InterruptedException {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0 || this.closed) {
			return false;
		}
		LockSupport.parkNanos(this, Math.min(this.settings.backoff().delayNanos(attempt), remaining));
		if (Thread.interrupted()) {
			throw new InterruptedException();
		}
		return !this.closed;
	}

	private static DbLockException failed(LockRequest request, DataAccessException ex) {
		return new DbLockException("Could not acquire lock '" + request.key() + "' in the " + request.mode()
				+ " mode: the database failed (" + ex.getMessage() + ")", ex);
	}

	/**
	 * Withdraws what an acquisition that gives up wrote, at once (its intent holds readers
	 * back); if that fails, again off this thread until its lease would have ended.
	 */
	private void withdraw(String key, String owner, Duration lease) {
		try {
			this.repository.withdraw(key, owner);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not withdraw the attempt of " + owner + " on lock '" + key + "'; trying again", ex);
			this.orphans.abandon(key, owner, lease);
		}
	}

	/**
	 * Withdraws orphans one by one (the repository has no batched withdrawal); one that
	 * fails is tried again in a later round and keeps no other from its turn.
	 */
	private int withdrawAll(Map<String, String> keysByOwner) {
		int deleted = 0;
		for (Map.Entry<String, String> orphan : keysByOwner.entrySet()) {
			try {
				deleted += this.repository.withdraw(orphan.getValue(), orphan.getKey());
			}
			catch (RuntimeException ex) {
				logger.debug("Could not withdraw the attempt of " + orphan.getKey() + " at '" + orphan.getValue()
						+ "' yet: " + ex.getMessage());
			}
		}
		return deleted;
	}

	/** Releases a hold whose count came to zero, after the current transaction if there is one. */
	private void release(ReadWriteHold held) {
		Hold hold = held.hold;
		if (TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.isActualTransactionActive()) {
			// the data written under the lock commits with the transaction: the next holder must see it
			if (hold.defer()) {
				TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
					@Override
					public void afterCompletion(int status) {
						if (hold.completed()) {
							end(held);
						}
					}
				});
			}
			return;
		}
		end(held);
	}

	/**
	 * Ends a hold in the database, once, and returns after the commit.
	 * @throws LockReleaseException if the release could not be confirmed: the key stays
	 * taken until the lease ends
	 */
	private void end(ReadWriteHold held) {
		Hold hold = held.hold;
		HeldLease lease = hold.lease;
		this.holds.remove(held.threadKey, held);
		hold.done = true;
		if (lease.remainingNanos() <= 0 && lease.lostAt == null) {
			lease.lost("it was released after its lease ended on the local clock");
		}
		RuntimeException failure = null;
		LocalWriters local = held.localWriters;
		long holdBackUntil = 0;
		boolean ceded = false;
		boolean handOver = false;
		if (local != null && !this.closed && lease.isValid() && local.permit.hasQueuedThreads()) {
			// another local writer waits: the key passes to it, unless the turn is over and another owner wants it
			boolean over = this.turn.over(local.turnStart);
			boolean cededNow;
			try {
				cededNow = over && this.turn.cedeIfWanted(lease);
			}
			catch (LockReleaseException ex) {
				// given up after a cede of unknown outcome, and its row's delete failed too
				cededNow = true;
				failure = ex;
			}
			if (cededNow) {
				// ended in the database (or given up after a cede of unknown outcome)
				ceded = true;
				holdBackUntil = this.turn.holdBackUntil();
				local.turnStart = 0;
			}
			else {
				handOver = true;
				if (over) {
					local.turnStart = System.nanoTime();
				}
			}
		}
		else if (local != null) {
			local.turnStart = 0;
		}
		lease.io.lock();
		try {
			if (ceded) {
				this.writers.remove(lease.lease.owner());
				this.events.released(lease.lease.key(), lease.mode, System.nanoTime() - hold.startedAt);
				if (failure instanceof LockReleaseException reported) {
					throw reported;
				}
				return;
			}
			if (lease.ended) {
				return;
			}
			try {
				boolean released = handOver ? this.repository.handOver(lease.current())
						: this.repository.release(lease.current(), held.writer);
				if (!released) {
					lease.lost("its row was gone or another owner's when released (its lease ended at " + lease.expiresAt
							+ ")");
				}
				else if (lease.lostAt == null) {
					this.events.holdEnded(lease.lease.key(), lease.mode, lease.lease.owner(), false);
				}
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			lease.ended = true;
			this.watchdog.unwatch(lease);
			this.writers.remove(lease.lease.owner());
			this.events.released(lease.lease.key(), lease.mode, System.nanoTime() - hold.startedAt);
		}
		finally {
			lease.io.unlock();
			if (local != null && held.turnGiven.compareAndSet(false, true)) {
				// the next local writer's turn, once the key is free in the database (after a cede, held back)
				local.holdBackUntil = holdBackUntil;
				local.permit.release();
				exitWriters(local);
			}
		}
		if (failure instanceof LockReleaseException reported) {
			throw reported;
		}
		if (failure != null) {
			throw new LockReleaseException(lease.lease.key(), lease.expiresAt, failure);
		}
	}

	private LocalWriters enterWriters(String key) {
		return this.localWriters.compute(key, (k, local) -> {
			LocalWriters entered = (local != null) ? local : new LocalWriters(k);
			entered.users++;
			return entered;
		});
	}

	private void exitWriters(LocalWriters local) {
		this.localWriters.computeIfPresent(local.key, (k, current) -> (current == local && --current.users == 0) ? null : current);
	}

	/** Adds the locks held now. */
	void held(List<HeldKey> held, long now) {
		for (ReadWriteHold hold : this.holds.values()) {
			Hold current = hold.hold;
			if (!current.done) {
				held.add(new HeldKey(hold.threadKey.key(), hold.writer ? DbLockMode.WRITE : DbLockMode.READ,
						hold.threadKey.thread().getName(), Duration.ofNanos(now - current.startedAt)));
			}
		}
	}

	private void refuseIfClosed(String key) {
		if (this.closed) {
			throw new DbLockException("Could not acquire lock '" + key + "': the lock engine is shut down");
		}
	}

	/**
	 * Refuses new acquisitions and ends the waits at their next attempt; gives holders up to
	 * {@code grace} to release, then releases what is still held (marked lost) and stops the
	 * watchdog.
	 * @param grace how long holders may still work
	 */
	void shutdown(Duration grace) {
		this.closed = true;
		for (LocalWriters local : this.localWriters.values()) {
			// one more turn: each waiting writer in turn gets in, finds the mode shut down and passes it on
			local.permit.release();
		}
		long deadline = System.nanoTime() + grace.toNanos();
		while (!this.holds.isEmpty() && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(SHUTDOWN_CHECK_NANOS);
		}
		for (ReadWriteHold held : new ArrayList<>(this.holds.values())) {
			held.hold.lease.lost("the application shut down while it was held; its row is deleted");
			try {
				end(held);
			}
			catch (LockReleaseException ex) {
				logger.warn(ex.getMessage(), ex.getCause());
			}
		}
		this.watchdog.close();
		this.orphans.close();
	}

	@Override
	public void close() {
		shutdown(Duration.ZERO);
	}

	/** A key as one thread holds it. */
	private record ThreadKey(String key, Thread thread) {
	}

	/**
	 * What a successful attempt took, when its statement was sent, and the local writers'
	 * turn it holds (a writer's).
	 */
	private record Taken(Lease lease, long sentAt, @Nullable LocalWriters local) {
	}

	/** The writers of this JVM that want one key. */
	private static final class LocalWriters {

		final String key;

		/** One writer at a time asks the database or holds the key; fair, so that they take turns. */
		final Semaphore permit = new Semaphore(1, true);

		/** Threads and holds using this entry; guarded by the map. */
		int users;

		/**
		 * When this JVM's current turn at the key began ({@link System#nanoTime()}), 0 for no
		 * turn; changed only by the writer that holds the permit.
		 */
		volatile long turnStart;

		/** Before when the writer that takes the permit next does not ask the database; 0 for no holding back. */
		volatile long holdBackUntil;

		LocalWriters(String key) {
			this.key = key;
		}

	}

	/** A thread's hold of a key, reader's or writer's. */
	private final class ReadWriteHold {

		final ThreadKey threadKey;

		final boolean writer;

		final Hold hold;

		/** A writer's turn among the local writers of its key, given back once, when it ends. */
		final @Nullable LocalWriters localWriters;

		final AtomicBoolean turnGiven = new AtomicBoolean();

		ReadWriteHold(ThreadKey threadKey, boolean writer, HeldLease lease, LockRequest request,
				@Nullable LocalWriters localWriters) {
			this.threadKey = threadKey;
			this.writer = writer;
			this.localWriters = localWriters;
			this.hold = new Hold(lease, request, 0, (counted) -> release(this));
		}

	}

	/**
	 * What the watchdog and the local turn ask of the mode: renewals, each with its writer's
	 * intent, and a writer's cede at the end of a turn or its release after a cede of unknown
	 * outcome.
	 */
	private final class Renewals implements LockMode {

		@Override
		public @Nullable Lease acquire(LockRequest request) {
			throw new UnsupportedOperationException("The read/write watchdog only renews");
		}

		/** A read/write hold is never handed on: {@code newHolder} is always false. */
		@Override
		public Optional<Instant> extend(Lease lease, Duration duration, boolean newHolder) {
			return ReadWriteMode.this.repository.renew(lease, duration,
					ReadWriteMode.this.writers.contains(lease.owner()));
		}

		@Override
		public List<Optional<Instant>> extendAll(List<Lease> leases, Duration duration, boolean newHolder) {
			// a failure fails the batch: the watchdog then renews each alone
			return ReadWriteMode.this.repository.renewAll(leases, duration, ReadWriteMode.this.writers);
		}

		@Override
		public boolean release(Lease lease, Duration minimumHold) {
			return ReadWriteMode.this.repository.release(lease, ReadWriteMode.this.writers.contains(lease.owner()));
		}

		@Override
		public boolean cede(Lease lease, Duration wantedWithin) {
			return ReadWriteMode.this.repository.cede(lease, wantedWithin);
		}

	}

}
