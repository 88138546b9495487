package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.ConnectionLockRepository;
import io.github.dblock.jdbc.ConnectionLockRepository.NamedLock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * The named mode ({@link io.github.dblock.DbLockMode#NAMED}): the database server's named
 * lock, held by a connection of its own from acquisition to release.
 * <ul>
 * <li>Threads of this JVM that want one key queue on a fair local permit, so that one of
 * them at a time asks the server; a thread that holds a key takes it again with no
 * statement.</li>
 * <li>The server waits ({@code GET_LOCK}'s timeout, {@code lock_timeout}); where it counts
 * whole seconds, the rest of the wait is looks that do not wait, with {@link Backoff}.</li>
 * <li>Every second, the connection of each held lock is checked: one that no longer
 * answers has lost its lock (the server frees a dead session's locks), which is then marked
 * lost and logged at ERROR. Between two checks, a handle cannot know.</li>
 * <li>A hold whose last handle is closed inside a transaction is released when the
 * transaction completes, as in the lease mode ({@link CountedHold}).</li>
 * </ul>
 */
final class NamedStrategy extends AbstractLockStrategy {

	private static final Log logger = LogFactory.getLog(NamedStrategy.class);

	/** How often the connections of held locks are checked. */
	static final Duration CHECK_INTERVAL = Duration.ofSeconds(1);

	private final ConnectionLockRepository repository;

	private final Backoff backoff;

	private final LocalKeys<LocalNamed> keys = new LocalKeys<>(LocalNamed::new);

	private final Set<NamedHold> held = ConcurrentHashMap.newKeySet();

	private final LockScheduler.Tasks checker;

	private final Availability availability;

	private final Events events;

	private final OwnerIds ownerIds = new OwnerIds();

	NamedStrategy(ConnectionLockRepository repository, Backoff backoff, Events events, LockScheduler scheduler) {
		this.repository = repository;
		this.events = events;
		this.backoff = backoff;
		this.availability = new Availability("named", repository::namedLocksUnavailable);
		this.checker = scheduler.tasks("named-check");
		long interval = CHECK_INTERVAL.toNanos();
		this.checker.scheduleWithFixedDelay(this::checkConnections, interval, interval, TimeUnit.NANOSECONDS);
	}

	/**
	 * Takes a key's named lock.
	 * @return the handle, or {@code null} if another session held it for the whole wait
	 */
	@Override
	public List<DbLockMode> modes() {
		return List.of(DbLockMode.NAMED);
	}

	@Override
	public @Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		String key = request.key();
		Duration wait = request.waitTime();
		this.availability.check(key);
		long deadline = System.nanoTime() + wait.toNanos();
		LocalNamed local = this.keys.enter(key);
		boolean kept = false;
		try {
			refuseIfClosed(key);
			NamedHold current = local.hold;
			if (current != null && current.thread == Thread.currentThread() && current.isCountedOrDeferred()) {
				if (current.lostSince != null && current.isDeferredOnly()) {
					// lost while its release waited for the transaction: ended now, and the key asked for afresh
					release(current);
				}
				else {
					if (current.lostSince != null) {
						throw new DbLockException("Named lock '" + key + "' is held by this thread, but its connection "
								+ "was lost at " + current.lostSince + "; it cannot be taken again before it is released");
					}
					// the hold keeps its own use of the entry; one whose release waits for the transaction is taken again
					LockHandle again = current.reenterIfHeld();
					if (again != null) {
						return again;
					}
				}
			}
			if (!local.permit.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS)) {
				return null;
			}
			NamedLock lock;
			try {
				refuseIfClosed(key);
				lock = take(key, deadline);
			}
			catch (InterruptedException | RuntimeException ex) {
				local.permit.release();
				throw ex;
			}
			if (lock == null) {
				local.permit.release();
				refuseIfClosed(key);
				return null;
			}
			NamedHold hold = new NamedHold(key, local, lock);
			this.events.holdStarted(key, DbLockMode.NAMED, hold.owner, null);
			local.hold = hold;
			this.held.add(hold);
			kept = true;
			if (isClosed()) {
				// taken while the mode shut down: given back, so that no connection stays pinned
				release(hold);
				refuseIfClosed(key);
			}
			return hold.reenter();
		}
		finally {
			if (!kept) {
				this.keys.exit(local);
			}
		}
	}

	private @Nullable NamedLock take(String key, long deadline) throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			long remaining = Math.max(0, deadline - System.nanoTime());
			NamedLock lock;
			try {
				lock = this.repository.tryNamedLock(key, Duration.ofNanos(remaining));
			}
			catch (DataAccessException ex) {
				throw new DbLockException("Could not acquire named lock '" + key + "': the database failed ("
						+ ex.getMessage() + ")", ex);
			}
			if (lock != null) {
				return lock;
			}
			if (deadline - System.nanoTime() <= 0 || isClosed()) {
				return null;
			}
			this.events.contended(key, DbLockMode.NAMED);
			if (!pause(this.backoff, attempt, deadline)) {
				return null;
			}
		}
	}

	@Override
	public Optional<String> unavailable() {
		return this.availability.now();
	}

	private void release(NamedHold hold) {
		if (!hold.released.compareAndSet(false, true)) {
			// released already, by the shutdown: its handle closed after
			return;
		}
		this.held.remove(hold);
		hold.io.lock();
		try {
			if (!hold.lock.release()) {
				if (hold.lostSince == null) {
					hold.lost("its connection no longer held it when it was released");
				}
			}
			else if (hold.lostSince == null) {
				this.events.holdEnded(hold.key, DbLockMode.NAMED, hold.owner, false);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release named lock '" + hold.key + "'; its connection was closed, which frees it", ex);
		}
		finally {
			hold.io.unlock();
			hold.done = true;
			hold.local.hold = null;
			hold.local.permit.release();
			this.keys.exit(hold.local);
			this.events.released(hold.key, DbLockMode.NAMED, System.nanoTime() - hold.startedAt);
		}
	}

	@Override
	public void held(List<HeldKey> held, long now) {
		for (NamedHold hold : this.held) {
			if (!hold.done) {
				held.add(new HeldKey(hold.key, DbLockMode.NAMED, hold.thread.getName(),
						Duration.ofNanos(now - hold.startedAt)));
			}
		}
	}

	@Override
	public void waiting(List<WaitingKey> waiting) {
		for (LocalNamed local : this.keys.inUse()) {
			add(waiting, local.key, DbLockMode.NAMED, local.permit.getQueueLength());
		}
	}

	/** Marks held locks whose connection no longer answers as lost. */
	private void checkConnections() {
		for (NamedHold hold : this.held) {
			if (hold.lostSince == null && hold.io.tryLock()) {
				try {
					if (!hold.done && !hold.lock.isAlive()) {
						hold.lost("its connection no longer answers, and the server frees a dead session's locks");
					}
				}
				catch (RuntimeException ex) {
					hold.lost("its connection could not be checked: " + ex.getMessage());
				}
				finally {
					hold.io.unlock();
				}
			}
		}
	}

	@Override
	protected void wakeWaiters() {
		for (LocalNamed local : this.keys.inUse()) {
			// one more permit: each waiter in turn gets in, finds the mode shut down and passes it on
			local.permit.release();
		}
	}

	@Override
	protected boolean holding() {
		return !this.held.isEmpty();
	}

	@Override
	protected void endHolds() {
		for (NamedHold hold : this.held) {
			hold.lost("the application shut down while it was held; it is released");
			release(hold);
		}
	}

	@Override
	protected void stop() {
		this.checker.shutdownNow();
	}

	/** The threads of this JVM that want one key. */
	private static final class LocalNamed extends LocalKeys.Entry {

		/** One thread at a time asks the server or holds the lock; fair, so that they take turns. */
		final Semaphore permit = new Semaphore(1, true);

		volatile @Nullable NamedHold hold;

		LocalNamed(String key) {
			super(key);
		}

	}

	/** A named lock held by one thread, with its reentrant count and its token once drawn. */
	private final class NamedHold extends CountedHold {

		final String key;

		final LocalNamed local;

		final NamedLock lock;

		final Thread thread = Thread.currentThread();

		final long startedAt = System.nanoTime();

		/** One statement at a time on the holding connection. */
		final ReentrantLock io = new ReentrantLock();

		/** Released once, by its last handle's close or by the shutdown, whichever is first. */
		final AtomicBoolean released = new AtomicBoolean();

		private long token;

		volatile @Nullable Instant lostSince;

		volatile boolean done;

		/** This hold's owner id, for the listeners (the server's lock has none). */
		final String owner = NamedStrategy.this.ownerIds.next();

		NamedHold(String key, LocalNamed local, NamedLock lock) {
			this.key = key;
			this.local = local;
			this.lock = lock;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public Optional<Instant> lostSince() {
			return Optional.ofNullable(this.lostSince);
		}

		/** Released at once, or inside a transaction once it has completed. */
		@Override
		protected void countedDown() {
			releaseAfterTransaction(() -> release(this));
		}

		void lost(String why) {
			if (this.lostSince == null) {
				this.lostSince = Instant.now();
				logger.error("Named lock '" + this.key + "' lost: " + why);
				NamedStrategy.this.events.lost(this.key, DbLockMode.NAMED);
				NamedStrategy.this.events.holdEnded(this.key, DbLockMode.NAMED, this.owner, true);
			}
		}

		@Override
		public boolean isHeld() {
			return !this.done && this.lostSince == null;
		}

		@Override
		public long token() {
			this.io.lock();
			try {
				if (this.token == 0) {
					if (!isHeld()) {
						throw new DbLockException("Named lock '" + this.key + "' is no longer held; its fencing token "
								+ "was not read while it was");
					}
					try {
						this.token = this.lock.nextToken();
					}
					catch (DataAccessException ex) {
						lost("its connection failed: " + ex.getMessage());
						throw new DbLockException("Could not count the fencing token of named lock '" + this.key
								+ "': its connection failed, so the server has freed the lock", ex);
					}
				}
				return this.token;
			}
			finally {
				this.io.unlock();
			}
		}

	}

}
