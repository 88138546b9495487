package io.github.dblock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
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

/**
 * The lock engine. A thread that already holds a key takes it again with no SQL
 * (reentrancy); threads of this JVM that want the same key queue on a local fair gate, so
 * that one of them at a time talks to the database about the key, and a local release
 * hands the key to the next local waiter at once; the one at the head of the queue polls
 * the database with {@link Backoff} until it acquires or its wait runs out.
 */
public final class LockEngine {

	private static final Log logger = LogFactory.getLog(LockEngine.class);

	private final LockRepository repository;

	private final Backoff backoff;

	private final OwnerIds ownerIds = new OwnerIds();

	private final ConcurrentHashMap<String, LocalKey> localKeys = new ConcurrentHashMap<>();

	/**
	 * Creates an engine.
	 * @param repository where leases are kept
	 * @param backoff the pauses between attempts on a held key
	 */
	public LockEngine(LockRepository repository, Backoff backoff) {
		this.repository = repository;
		this.backoff = backoff;
	}

	/**
	 * Acquires a key, waiting up to {@code wait} while another owner holds it.
	 * @param key the stored key
	 * @param wait how long to wait, zero for one attempt
	 * @param lease how long the lease lasts
	 * @return the handle, to be closed to release
	 * @throws LockAcquisitionException if the key stayed held for the whole wait
	 * @throws DbLockException for bad arguments, a database failure or an interrupt (the
	 * thread's interrupt flag is then set again)
	 */
	public LockHandle acquire(String key, Duration wait, Duration lease) {
		long start = System.nanoTime();
		LockHandle handle;
		try {
			handle = acquireInterruptibly(key, wait, lease);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DbLockException("Interrupted while waiting for lock '" + key + "'", ex);
		}
		if (handle == null) {
			throw new LockAcquisitionException(key, Duration.ofNanos(System.nanoTime() - start));
		}
		return handle;
	}

	/**
	 * Acquires a key if it can be had without waiting for another owner.
	 * @param key the stored key
	 * @param lease how long the lease lasts
	 * @return the handle, or empty if the key is held
	 */
	public Optional<LockHandle> tryAcquire(String key, Duration lease) {
		try {
			return Optional.ofNullable(acquireInterruptibly(key, Duration.ZERO, lease));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DbLockException("Interrupted while acquiring lock '" + key + "'", ex);
		}
	}

	/**
	 * Acquires a key, waiting up to {@code wait}, and lets an interrupt end the wait.
	 * @param key the stored key
	 * @param wait how long to wait, zero for one attempt
	 * @param lease how long the lease lasts
	 * @return the handle, or {@code null} if the key stayed held for the whole wait
	 * @throws InterruptedException if the thread is interrupted while waiting
	 */
	public @Nullable LockHandle acquireInterruptibly(String key, Duration wait, Duration lease)
			throws InterruptedException {
		checkKey(key);
		if (wait.isNegative()) {
			throw new DbLockException("Wait for lock '" + key + "' must not be negative, got " + wait);
		}
		if (lease.isNegative() || lease.isZero()) {
			throw new DbLockException("Lease of lock '" + key + "' must be positive, got " + lease);
		}
		long deadline = System.nanoTime() + wait.toNanos();
		LocalKey local = enter(key);
		boolean keepsSlot = false;
		try {
			Hold current = local.hold;
			if (current != null && current.thread == Thread.currentThread()) {
				return current.reenter();
			}
			if (!local.gate.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS)) {
				return null;
			}
			Lease acquired;
			try {
				acquired = poll(key, lease, deadline);
			}
			catch (InterruptedException | RuntimeException ex) {
				local.gate.release();
				throw ex;
			}
			if (acquired == null) {
				local.gate.release();
				return null;
			}
			Hold hold = new Hold(local, acquired);
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

	private @Nullable Lease poll(String key, Duration lease, long deadline) throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			Lease acquired = attempt(key, lease);
			if (acquired != null) {
				return acquired;
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return null;
			}
			TimeUnit.NANOSECONDS.sleep(Math.min(this.backoff.delayNanos(attempt), remaining));
		}
	}

	private @Nullable Lease attempt(String key, Duration lease) {
		try {
			return this.repository.tryAcquire(key, this.ownerIds.next(), lease).orElse(null);
		}
		catch (DataAccessException ex) {
			throw new DbLockException("Could not acquire lock '" + key + "': the database failed", ex);
		}
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
		LocalKey local = hold.local;
		Lease lease = hold.lease;
		local.hold = null;
		try {
			if (!this.repository.release(lease)) {
				logger.warn("Lock '" + lease.key() + "' (owner " + lease.owner() + ", token " + lease.token()
						+ ") was no longer held when released: its lease ended at " + lease.expiresAt());
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release lock '" + lease.key() + "' (owner " + lease.owner()
					+ "); it stays taken until its lease ends at " + lease.expiresAt(), ex);
		}
		finally {
			local.gate.release();
			exit(lease.key(), local);
		}
	}

	/** Threads of this JVM that want one key: the gate admits one to the database. */
	private static final class LocalKey {

		final Semaphore gate = new Semaphore(1, true);

		/** Guarded by the engine's map: entries are only changed inside compute. */
		int users;

		volatile @Nullable Hold hold;

	}

	/** A lease held by one thread, with its reentrant count. */
	private final class Hold {

		final LocalKey local;

		final Lease lease;

		final Thread thread = Thread.currentThread();

		final AtomicInteger count = new AtomicInteger();

		Hold(LocalKey local, Lease lease) {
			this.local = local;
			this.lease = lease;
		}

		LockHandle reenter() {
			this.count.incrementAndGet();
			return new Handle(this);
		}

		void countDown() {
			if (this.count.decrementAndGet() == 0) {
				release(this);
			}
		}

	}

	/** One acquisition's view of a hold: closing it twice counts down once. */
	private static final class Handle implements LockHandle {

		private final Hold hold;

		private final AtomicBoolean open = new AtomicBoolean(true);

		Handle(Hold hold) {
			this.hold = hold;
		}

		@Override
		public String key() {
			return this.hold.lease.key();
		}

		@Override
		public long fencingToken() {
			return this.hold.lease.token();
		}

		@Override
		public Instant expiresAt() {
			return this.hold.lease.expiresAt();
		}

		@Override
		public boolean isHeld() {
			return this.open.get();
		}

		@Override
		public void close() {
			if (this.open.compareAndSet(true, false)) {
				this.hold.countDown();
			}
		}

		@Override
		public String toString() {
			return "LockHandle[key=" + key() + ", token=" + fencingToken() + ", expiresAt=" + expiresAt() + "]";
		}

	}

}
