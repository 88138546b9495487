package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;
import io.github.dblock.LockRequest;
import io.github.dblock.LockUpgradeException;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;


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
final class ReadWriteStrategy extends AbstractLockStrategy {

	private static final Log logger = LogFactory.getLog(ReadWriteStrategy.class);

	private final ReadWriteLockRepository repository;

	private final LockEngineSettings settings;

	private final Events events;

	private final LeaseWatchdog watchdog;

	private final LocalTurn turn;

	private final ReadWriteAttempts attempts;

	/** The holds of this JVM, by key and thread. */
	private final ConcurrentHashMap<ThreadKey, ReadWriteHold> holds = new ConcurrentHashMap<>();

	/** The owner ids of the writers held now, whose renewal renews their intent too. */
	private final Set<String> writers = ConcurrentHashMap.newKeySet();

	private final Availability availability;

	ReadWriteStrategy(ReadWriteLockRepository repository, LockEngineSettings settings, Events events,
			LockScheduler scheduler) {
		this.repository = repository;
		this.attempts = new ReadWriteAttempts(this, repository, settings, scheduler);
		this.settings = settings;
		this.events = events;
		Renewals renewals = new Renewals();
		this.watchdog = new LeaseWatchdog(renewals, scheduler);
		this.turn = new LocalTurn(renewals, this.watchdog, settings, events);
		this.availability = new Availability("read/write", repository::unavailable);
	}

	@Override
	public List<DbLockMode> modes() {
		return List.of(DbLockMode.READ, DbLockMode.WRITE);
	}

	@Override
	public Optional<String> unavailable() {
		return this.availability.now();
	}

	/**
	 * Takes a key for reading or writing, as the request's mode says.
	 * @return the handle, or {@code null} if the key stayed taken for the whole wait
	 * @throws LockUpgradeException if the thread holds the key for reading and asks to write
	 */
	@Override
	public @Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
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
		ReadWriteAttempts.Taken taken = write ? this.attempts.write(request, deadline) : this.attempts.read(request, deadline);
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
		if (isClosed()) {
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

	/** Releases a hold whose count came to zero, after the current transaction if there is one. */
	private void release(ReadWriteHold held) {
		held.hold.releaseAfterTransaction(() -> end(held));
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
		if (local != null && !isClosed() && lease.isValid() && local.permit.hasQueuedThreads()) {
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
				this.attempts.exit(local);
			}
		}
		if (failure instanceof LockReleaseException reported) {
			throw reported;
		}
		if (failure != null) {
			throw new LockReleaseException(lease.lease.key(), lease.expiresAt, failure);
		}
	}

	@Override
	public void held(List<HeldKey> held, long now) {
		for (ReadWriteHold hold : this.holds.values()) {
			Hold current = hold.hold;
			if (!current.done) {
				held.add(new HeldKey(hold.threadKey.key(), hold.writer ? DbLockMode.WRITE : DbLockMode.READ,
						hold.threadKey.thread().getName(), Duration.ofNanos(now - current.startedAt)));
			}
		}
	}

	/** Readers each ask the database; writers queue locally for their turn. */
	@Override
	public void waiting(List<WaitingKey> waiting) {
		for (LocalWriters local : this.attempts.localWriters()) {
			add(waiting, local.key, DbLockMode.WRITE, local.permit.getQueueLength());
		}
	}

	@Override
	protected void wakeWaiters() {
		for (LocalWriters local : this.attempts.localWriters()) {
			// one more turn: each waiting writer in turn gets in, finds the mode shut down and passes it on
			local.permit.release();
		}
	}

	@Override
	protected boolean holding() {
		return !this.holds.isEmpty();
	}

	@Override
	protected void endHolds() {
		for (ReadWriteHold held : new ArrayList<>(this.holds.values())) {
			held.hold.lease.lost("the application shut down while it was held; its row is deleted");
			try {
				end(held);
			}
			catch (LockReleaseException ex) {
				logger.warn(ex.getMessage(), ex.getCause());
			}
		}
	}

	@Override
	protected void stop() {
		this.watchdog.close();
		this.attempts.close();
	}

	/** A key as one thread holds it. */
	private record ThreadKey(String key, Thread thread) {
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

		/** A read/write hold is never handed on: {@code newHolder} is always false. */
		@Override
		public Optional<Instant> extend(Lease lease, Duration duration, boolean newHolder) {
			return ReadWriteStrategy.this.repository.renew(lease, duration,
					ReadWriteStrategy.this.writers.contains(lease.owner()));
		}

		@Override
		public List<Optional<Instant>> extendAll(List<Lease> leases, Duration duration, boolean newHolder) {
			// a failure fails the batch: the watchdog then renews each alone
			return ReadWriteStrategy.this.repository.renewAll(leases, duration, ReadWriteStrategy.this.writers);
		}

		@Override
		public boolean release(Lease lease, Duration minimumHold) {
			return ReadWriteStrategy.this.repository.release(lease, ReadWriteStrategy.this.writers.contains(lease.owner()));
		}

		@Override
		public boolean cede(Lease lease, Duration wantedWithin) {
			return ReadWriteStrategy.this.repository.cede(lease, wantedWithin);
		}

	}

}
