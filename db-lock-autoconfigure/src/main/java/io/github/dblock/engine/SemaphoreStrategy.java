package io.github.dblock.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.LockRepository;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * The semaphore mode ({@link DbLockMode#SEMAPHORE}): up to {@link LockRequest#permits()}
 * holders of a key at once. Each permit is a lease of the lease mode under the key
 * {@code <key>#permit-<n>}, taken and kept by a {@link LeaseStrategy} of this mode's own
 * (its row, token, renewal, loss, release after the transaction and commit guard are the
 * lease mode's); this strategy adds what a semaphore has more:
 * <ul>
 * <li>The threads of this JVM that want a permit of one key line up at a fair local gate
 * ({@link LocalSemaphore#line}); the first of them asks the database, trying each permit
 * that no thread of this JVM holds, with {@link Backoff} between rounds, until it takes one
 * or its wait runs out; then the next thread asks.</li>
 * <li>A permit released while a thread of this JVM waits for the key wakes that thread at
 * once, for at most a local turn ({@link LockEngineSettings#localTurn()}); when a turn is
 * over and another owner's attempt marked the permit as wanted, the permit is ceded
 * ({@link LocalTurn#cedeIfWanted}) and this JVM's next attempt holds back, so that the other
 * JVM gets it.</li>
 * <li>The number of permits is checked against the one recorded for the key
 * ({@link LockRepository#recordPermits}), read once per key and JVM.</li>
 * </ul>
 */
final class SemaphoreStrategy extends AbstractLockStrategy {

	/** Between a semaphore's key and a permit's number, in the permit's key. */
	static final String PERMIT = "#permit-";

	/** The most keys {@link #recorded} keeps. */
	private static final int RECORDED_KEYS = 10_000;

	private final LockRepository repository;

	private final LockEngineSettings settings;

	private final Events events;

	private final LocalKeys<LocalSemaphore> keys = new LocalKeys<>(LocalSemaphore::new);

	/** The permits' leases. */
	private final LeaseStrategy permits;

	/** Whether the table of the numbers of permits can be read, asked once. */
	private final Availability availability;

	/**
	 * The numbers of permits read or recorded for keys, so that a key used again asks the
	 * database once per JVM; emptied when it reaches {@link #RECORDED_KEYS}.
	 */
	private final Map<String, Integer> recorded = new ConcurrentHashMap<>();

	/**
	 * Until when ({@link System#nanoTime()}) this JVM holds back at a key after it ceded a
	 * permit of it: kept apart from the key's local entry, which goes when no thread of the
	 * JVM asks for the key, so that the next thread to come holds back too.
	 */
	private final Map<String, Long> holdBacks = new ConcurrentHashMap<>();

	SemaphoreStrategy(LockRepository repository, LockEngineSettings settings, Events events, LockScheduler scheduler) {
		this.repository = repository;
		this.settings = settings;
		this.events = events;
		this.permits = new LeaseStrategy(repository, settings, events, scheduler, DbLockMode.SEMAPHORE, this::release,
				WakeUps.NONE);
		this.availability = new Availability("semaphore", repository::semaphoresUnavailable);
	}

	@Override
	public List<DbLockMode> modes() {
		return List.of(DbLockMode.SEMAPHORE);
	}

	@Override
	public Optional<String> unavailable() {
		return this.availability.now();
	}

	/**
	 * The key of one permit of a semaphore.
	 * @param key the semaphore's stored key
	 * @param permit the permit's number, from 0
	 * @return the permit's stored key
	 */
	static String permitKey(String key, int permit) {
		return key + PERMIT + permit;
	}

	/**
	 * Refuses a key of another mode shaped like a permit's, {@code <key>#permit-<digits>}:
	 * it would be that permit, in the same table.
	 * @param key the stored key
	 * @throws DbLockException if it is shaped so
	 */
	static void checkNotPermitKey(String key) {
		int at = key.lastIndexOf(PERMIT);
		int digits = at + PERMIT.length();
		if (at < 0 || digits == key.length()) {
			return;
		}
		for (int i = digits; i < key.length(); i++) {
			if (!Character.isDigit(key.charAt(i))) {
				return;
			}
		}
		throw new DbLockException("Lock key '" + key + "' ends like the key of a semaphore's permit ('<key>" + PERMIT
				+ "<n>'), which the semaphore mode keeps in the lock table: use another key");
	}

	@Override
	public @Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		String key = request.key();
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		// the entry lives while a thread asks for or waits for a permit of the key; a permit's
		// release finds it there when one does (and a fresh one, of no use, when none does)
		LocalSemaphore local = this.keys.enter(key);
		try {
			refuseIfClosed(key);
			this.availability.check(key);
			checkPermits(request);
			LockHandle again = retakeDeferred(request);
			if (again != null) {
				return again;
			}
			LocalGate.Passage<Void> passage = local.line.enter(request.waitTime().toNanos());
			if (passage == null) {
				refuseIfClosed(key);
				return null;
			}
			try {
				LockHandle permit = poll(request, local, deadline);
				if (permit == null) {
					refuseIfClosed(key);
				}
				return permit;
			}
			finally {
				local.line.leave();
			}
		}
		finally {
			this.keys.exit(local);
		}
	}

	/**
	 * Checks the number of permits against the one recorded for the key, read once per key
	 * and JVM (outside any monitor: threads that read it at once each send the statements,
	 * which agree).
	 */
	private void checkPermits(LockRequest request) {
		Integer recorded = this.recorded.get(request.key());
		if (recorded == null) {
			String last = permitKey(request.key(), request.permits() - 1);
			if (last.length() > this.repository.maxKeyLength()) {
				throw new DbLockException("Semaphore key '" + request.key() + "' is too long: its permits' keys, such as '"
						+ last + "', are longer than the " + this.repository.maxKeyLength()
						+ " characters the lock table holds");
			}
			try {
				recorded = this.repository.recordPermits(request.key(), request.permits());
			}
			catch (DataAccessException ex) {
				throw new DbLockException("Could not read or record the number of permits of semaphore '" + request.key()
						+ "' (table <table-name>_semaphore, migration V9): the database failed (" + ex.getMessage() + ")", ex);
			}
			if (this.recorded.size() >= RECORDED_KEYS) {
				this.recorded.clear();
			}
			this.recorded.put(request.key(), recorded);
		}
		if (recorded != request.permits()) {
			throw new DbLockException("Semaphore '" + request.key() + "' has " + recorded + " permits, not "
					+ request.permits() + ": every caller of a semaphore key must ask for the same number (recorded in the "
					+ "table <table-name>_semaphore at the key's first use and read once per key by each node; to change "
					+ "it, stop the nodes that use the key and delete its row there, or use another key)");
		}
	}

	private @Nullable LockHandle poll(LockRequest request, LocalSemaphore local, long deadline)
			throws InterruptedException {
		local.asking = Thread.currentThread();
		try {
			return pollAsking(request, local, deadline);
		}
		finally {
			local.asking = null;
		}
	}

	private @Nullable LockHandle pollAsking(LockRequest request, LocalSemaphore local, long deadline)
			throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			local.polling = Thread.currentThread();
			try {
				holdBack(holdBackUntil(request.key()), deadline);
			}
			finally {
				local.polling = null;
			}
			if (isClosed()) {
				return null;
			}
			local.freed = false;
			LockHandle permit = tryPermits(request, local);
			if (permit != null) {
				return permit;
			}
			if (deadline - System.nanoTime() <= 0 || isClosed()) {
				return null;
			}
			this.events.contended(request.key(), DbLockMode.SEMAPHORE);
			local.polling = Thread.currentThread();
			try {
				if (!pause(this.settings.backoff(), attempt, deadline, () -> local.freed)) {
					return null;
				}
			}
			finally {
				local.polling = null;
			}
		}
	}

	/**
	 * The permit this thread released inside its transaction (its release waits for the
	 * commit), taken again ahead of the line: no other thread could have it meanwhile.
	 */
	private @Nullable LockHandle retakeDeferred(LockRequest request) throws InterruptedException {
		for (int permit = 0; permit < request.permits(); permit++) {
			LockHandle again = this.permits.retakeDeferred(permitRequest(request, permit));
			if (again != null) {
				return again;
			}
		}
		return null;
	}

	private static LockRequest permitRequest(LockRequest request, int permit) {
		return new LockRequest(permitKey(request.key(), permit), Duration.ZERO, request.lease(), request.renewed(),
				Duration.ZERO, DbLockMode.SEMAPHORE);
	}

	/**
	 * One round over the permits no thread of this JVM holds, from the one after the last
	 * taken here, so that the JVM's threads spread over them.
	 */
	private @Nullable LockHandle tryPermits(LockRequest request, LocalSemaphore local) throws InterruptedException {
		int count = request.permits();
		int start = Math.floorMod(local.next, count);
		for (int i = 0; i < count; i++) {
			if (holdingBack(request.key())) {
				// a permit was ceded to another JVM meanwhile: it goes first
				return null;
			}
			int permit = (start + i) % count;
			LockHandle handle = this.permits.acquire(permitRequest(request, permit), false);
			if (handle != null) {
				local.next = permit + 1;
				return handle;
			}
		}
		return null;
	}

	/**
	 * Around the release of a permit, after the transaction if there is one: at the end of a
	 * turn while a thread of this JVM waits for the key, cedes the permit if another owner
	 * asked for it (the waiting thread then holds back); else releases it and wakes the
	 * waiting thread.
	 */
	private void release(Hold hold, Runnable releaseNow) {
		String permitKey = hold.key();
		LocalSemaphore local = this.keys.enter(permitKey.substring(0, permitKey.lastIndexOf(PERMIT)));
		try {
			boolean waiting = local.asking != null || local.line.queued() > 0;
			boolean ceded = false;
			LockReleaseException failure = null;
			if (!waiting) {
				local.turnStart = System.nanoTime();
			}
			else if (this.permits.turn().over(local.turnStart)) {
				local.turnStart = System.nanoTime();
				try {
					ceded = this.permits.turn().cedeIfWanted(hold.lease);
				}
				catch (LockReleaseException ex) {
					ceded = true;
					failure = ex;
				}
				if (ceded) {
					// before the permit's gate opens: no thread of this JVM takes it back meanwhile
					startHoldingBack(local.key);
				}
			}
			try {
				// a ceded lease is ended: its release sends no statement
				releaseNow.run();
			}
			finally {
				if (!ceded && !holdingBack(local.key)) {
					// also when no thread was seen asking: one may be in its round of attempts
					local.freed = true;
					Thread polling = local.polling;
					if (polling != null) {
						LockSupport.unpark(polling);
					}
				}
			}
			if (failure != null) {
				throw failure;
			}
		}
		finally {
			this.keys.exit(local);
		}
	}

	/** This JVM holds back at a key from now on, for the turn's hold-back. */
	private void startHoldingBack(String key) {
		if (this.holdBacks.size() >= RECORDED_KEYS) {
			long now = System.nanoTime();
			this.holdBacks.values().removeIf((until) -> until - now <= 0);
		}
		this.holdBacks.put(key, this.permits.turn().holdBackUntil());
	}

	/** Until when this JVM holds back at a key; 0 for not at all. */
	private long holdBackUntil(String key) {
		Long until = this.holdBacks.get(key);
		return (until != null) ? until : 0;
	}

	/** Whether this JVM holds back at a key now. */
	private boolean holdingBack(String key) {
		Long until = this.holdBacks.get(key);
		if (until == null) {
			return false;
		}
		if (until - System.nanoTime() > 0) {
			return true;
		}
		this.holdBacks.remove(key, until);
		return false;
	}

	@Override
	public void held(List<HeldKey> held, long now) {
		this.permits.held(held, now);
	}

	@Override
	public void waiting(List<WaitingKey> waiting) {
		for (LocalSemaphore local : this.keys.inUse()) {
			add(waiting, local.key, DbLockMode.SEMAPHORE, local.line.queued());
		}
	}

	@Override
	protected void wakeWaiters() {
		this.permits.refuse();
		for (LocalSemaphore local : this.keys.inUse()) {
			local.line.refuseWaiters();
			Thread polling = local.polling;
			if (polling != null) {
				LockSupport.unpark(polling);
			}
		}
	}

	@Override
	protected boolean holding() {
		return this.permits.holding();
	}

	@Override
	protected void endHolds() {
		this.permits.endHolds();
	}

	@Override
	protected void stop() {
		this.permits.stop();
	}

	/** The threads of this JVM that use one semaphore key. */
	static final class LocalSemaphore extends LocalKeys.Entry {

		/** The threads that wait for a permit: the first asks the database. */
		final LocalGate<Void> line = new LocalGate<>();

		/** The permit to try first. */
		volatile int next;

		/** A permit of this JVM was released since the asking thread last asked. */
		volatile boolean freed;

		/** The thread that asks the database, from its first attempt to its last. */
		volatile @Nullable Thread asking;

		/** The asking thread while it pauses between attempts. */
		volatile @Nullable Thread polling;

		/** When this JVM's turn at the key began (while its threads wait for it without a break). */
		volatile long turnStart = System.nanoTime();

		LocalSemaphore(String key) {
			super(key);
		}

	}

}
