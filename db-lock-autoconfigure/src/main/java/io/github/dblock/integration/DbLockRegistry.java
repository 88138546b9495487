package io.github.dblock.integration;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.github.dblock.DbLockException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.support.DbLockLock;
import io.github.dblock.support.DbLockTemplate;

import org.jspecify.annotations.Nullable;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.util.Assert;

/**
 * Spring Integration's {@link LockRegistry} on db-lock: the locks of a
 * {@link DbLockTemplate}, in the lease mode, so that Spring Integration's aggregators, its
 * {@code LockRequestHandlerAdvice} and its {@code LockRegistryLeaderInitiator} lock in
 * db-lock's table, on the database's clock, with fencing tokens and lost-lease detection.
 * <ul>
 * <li>The key of {@link #obtain(Object)} is {@code lockKey.toString()}, stored as the
 * template stores keys ({@code [db-lock.key-prefix:]key}), readable in the table; it must
 * be a valid db-lock key (not blank, not longer than the table allows).</li>
 * <li>{@code obtain} keeps no lock objects: it returns a new one at each call, which acts
 * as every other lock of the same key, since a lock keeps no state of its own (what a
 * thread holds is kept by the template): a lock taken through one is unlocked through
 * another. Nothing grows with the number of keys.</li>
 * <li>The locks are reentrant per thread. {@link DistributedLock#lock()},
 * {@code lockInterruptibly()}, {@code tryLock()} and {@code tryLock(time, unit)} take the
 * key with {@code db-lock.default-lease}, renewed by db-lock's watchdog while held;
 * {@link DistributedLock#lock(Duration)} and {@link DistributedLock#tryLock(Duration, Duration)}
 * take it with a fixed lease of that time-to-live, which ends on time even if the holder
 * still runs. A thread that holds a key with a time-to-live and asks for it again without
 * one gets a {@link DbLockException}: db-lock does not turn a fixed lease into a renewed
 * one.</li>
 * <li>{@code unlock()} by a thread that does not hold the lock throws
 * {@link IllegalMonitorStateException}; {@code unlock()} of a lock whose lease was lost
 * while held (expired, or taken over) throws {@link ConcurrentModificationException}, as
 * Spring Integration's {@code JdbcLockRegistry} does, with db-lock's
 * {@link LockLostException} as its cause (unless {@code db-lock.on-lost-lease=log}: then
 * the loss is only logged). A thread whose hold was lost cannot take the key again before it
 * unlocked that hold: {@code lock} and {@code tryLock} throw
 * {@link ConcurrentModificationException} (a {@code LockRegistryLeaderInitiator} then
 * revokes its leadership, unlocks, and stands again), where db-lock alone would take the key
 * afresh for the inner acquisition and give it back at its unlock. Conditions are not
 * supported.</li>
 * <li>{@link #renewLock(Object, Duration)} extends the current thread's fixed lease;
 * a lease renewed by the watchdog needs no renewal and is left as it is.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public class DbLockRegistry implements RenewableLockRegistry<DistributedLock> {

	private final DbLockTemplate template;

	/**
	 * Creates a registry over the locks of a template.
	 * @param template the template whose engine, key prefix and default lease the locks use
	 */
	public DbLockRegistry(DbLockTemplate template) {
		Assert.notNull(template, "'template' must not be null");
		this.template = template;
	}

	/**
	 * The lock of a key: a new object, which acts as every other lock of that key.
	 * @param lockKey the key; its {@code toString()} is the db-lock key, without the prefix
	 * @return the lock
	 * @throws DbLockException if the key is blank or too long for the lock table
	 */
	@Override
	public DistributedLock obtain(Object lockKey) {
		Assert.notNull(lockKey, "'lockKey' must not be null");
		String key = lockKey.toString();
		return new RegistryLock(this.template.obtain(key));
	}

	/**
	 * Renews the current thread's lease of a key by {@code db-lock.default-lease}; see
	 * {@link #renewLock(Object, Duration)}.
	 * @param lockKey the key
	 * @throws IllegalMonitorStateException if the current thread does not hold the key
	 * @throws IllegalStateException if its lease was lost, so could not be renewed
	 */
	@Override
	public void renewLock(Object lockKey) {
		renew(lockKey, null);
	}

	/**
	 * Renews the current thread's lease of a key: a fixed lease (taken with a time-to-live)
	 * is extended to at least {@code ttl} from the database's now, with one statement
	 * checked against its owner and fencing token; a lease renewed by the watchdog (taken
	 * without a time-to-live) is left to the watchdog. Either way the call checks that the
	 * thread still holds it.
	 * @param lockKey the key
	 * @param ttl the lease from now, positive
	 * @throws IllegalMonitorStateException if the current thread does not hold the key
	 * @throws IllegalStateException if its lease was lost, so could not be renewed
	 */
	@Override
	public void renewLock(Object lockKey, Duration ttl) {
		Assert.notNull(ttl, "'ttl' must not be null");
		renew(lockKey, ttl);
	}

	private void renew(Object lockKey, @Nullable Duration ttl) {
		RegistryLock lock = (RegistryLock) obtain(lockKey);
		if (!lock.delegate.renew(ttl)) {
			throw new IllegalStateException("Could not renew lock '" + lockKey + "': its lease was lost");
		}
	}

	/** A {@link DistributedLock} over the template's lock of one key. */
	private static final class RegistryLock implements DistributedLock {

		private final DbLockLock delegate;

		RegistryLock(DbLockLock delegate) {
			this.delegate = delegate;
		}

		@Override
		public void lock() {
			checkNotLost();
			this.delegate.lock();
		}

		@Override
		public void lock(Duration ttl) {
			Assert.notNull(ttl, "'ttl' must not be null");
			checkNotLost();
			this.delegate.lock(ttl);
		}

		@Override
		public void lockInterruptibly() throws InterruptedException {
			checkNotLost();
			this.delegate.lockInterruptibly();
		}

		@Override
		public boolean tryLock() {
			checkNotLost();
			return this.delegate.tryLock();
		}

		@Override
		public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
			checkNotLost();
			return this.delegate.tryLock(time, unit);
		}

		@Override
		public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
			Assert.notNull(waitTime, "'waitTime' must not be null");
			Assert.notNull(ttl, "'ttl' must not be null");
			checkNotLost();
			return this.delegate.tryLock(waitTime, ttl);
		}

		@Override
		public void unlock() {
			try {
				this.delegate.unlock();
			}
			catch (LockLostException ex) {
				throw new ConcurrentModificationException("Lock '" + ex.getKey() + "' was lost at " + ex.getLostSince()
						+ " while held: its lease ended or another owner took it over. The integrity of data protected "
						+ "by this lock may have been compromised.", ex);
			}
		}

		/**
		 * Refuses a re-entry into a hold that was lost: the engine would take the key
		 * afresh and release it at the inner unlock, leaving the outer holder unaware.
		 */
		private void checkNotLost() {
			LockHandle current = this.delegate.current();
			if (current != null && !current.isHeld()) {
				throw new ConcurrentModificationException("Lock '" + current.key() + "' was lost while this thread "
						+ "held it" + current.lostSince().map((at) -> " (at " + at + ")").orElse("")
						+ ": its lease ended or another owner took it over; unlock it before taking it again");
			}
		}

		@Override
		public Condition newCondition() {
			return this.delegate.newCondition();
		}

		@Override
		public String toString() {
			return this.delegate.toString();
		}

	}

}
