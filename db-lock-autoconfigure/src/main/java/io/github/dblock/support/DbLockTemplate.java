package io.github.dblock.support;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.regex.Pattern;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockChecks;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.LockReleaseException;
import io.github.dblock.LockRequest;
import io.github.dblock.LockUpgradeException;
import io.github.dblock.LostLeasePolicy;
import io.github.dblock.engine.LockEngine;
import org.jspecify.annotations.Nullable;

/**
 * Programmatic access to db-lock, in the spirit of Spring's {@code TransactionTemplate}:
 * {@code execute} runs a callback holding a lock, {@code acquire} returns a handle to
 * close, {@code tryAcquire} and {@code tryExecute} make one attempt without waiting. Each
 * takes a key in the lease mode, or a {@link DbLockMode} and a key. Keys given here are
 * stored as {@code [key-prefix:]key}. A {@code null} wait means {@code db-lock.default-wait};
 * a {@code null} lease means {@code db-lock.default-lease}, renewed by a watchdog for as
 * long as the lock is held, whereas a given lease is fixed and ends on time even if the
 * holder still runs. The {@code execute} methods throw {@link LockAcquisitionException} if
 * the lock stayed held for the whole wait, {@link LockLostException} if the lease was lost
 * while the callback ran (per the lost-lease policy), {@link LockReleaseException} if the
 * release could not be confirmed (with the callback's result; suppressed by the callback's
 * exception if it threw), and wrap a callback's checked exception in an
 * {@link UndeclaredThrowableException}.
 *
 * <pre class="code">
 * Receipt receipt = template.execute("order:" + id, () -> payments.charge(id));
 * </pre>
 *
 * @since 0.1.0
 */
public class DbLockTemplate {

	private static final Pattern KEY_PREFIX = Pattern.compile("[A-Za-z0-9_.\\-]{0,64}");

	private final LockEngine engine;

	private final String keyPrefix;

	private final Duration defaultWait;

	private final Duration defaultLease;

	private final LostLeasePolicy onLostLease;

	/** The handles each thread holds through {@link #obtain} locks, by key. */
	private final ThreadLocal<Map<String, ArrayDeque<LockHandle>>> lockHandles = ThreadLocal.withInitial(HashMap::new);

	/**
	 * Creates a template that throws {@link LockLostException} for a lost lease.
	 * @param engine the engine
	 * @param keyPrefix prepended to every key with a colon; empty for none. Letters,
	 * digits, {@code _ . -}, at most 64 characters
	 * @param defaultWait the wait when none is given
	 * @param defaultLease the lease when none is given
	 */
	public DbLockTemplate(LockEngine engine, String keyPrefix, Duration defaultWait, Duration defaultLease) {
		this(engine, keyPrefix, defaultWait, defaultLease, LostLeasePolicy.THROW);
	}

	/**
	 * Creates a template.
	 * @param engine the engine
	 * @param keyPrefix prepended to every key with a colon; empty for none. Letters,
	 * digits, {@code _ . -}, at most 64 characters
	 * @param defaultWait the wait when none is given
	 * @param defaultLease the lease when none is given
	 * @param onLostLease what {@code execute} does when the lease was lost while the action
	 * ran
	 */
	public DbLockTemplate(LockEngine engine, String keyPrefix, Duration defaultWait, Duration defaultLease,
			LostLeasePolicy onLostLease) {
		if (!KEY_PREFIX.matcher(keyPrefix).matches()) {
			throw new IllegalArgumentException("Invalid db-lock key prefix '" + keyPrefix
					+ "': expected letters, digits, '_', '.' or '-', at most 64 characters");
		}
		if (!LockChecks.isValidWait(defaultWait)) {
			throw new IllegalArgumentException("The default wait (db-lock.default-wait) must not be negative, got "
					+ LockChecks.format(defaultWait));
		}
		if (!LockChecks.isValidLease(defaultLease)) {
			throw new IllegalArgumentException("The default lease (db-lock.default-lease) must be positive, got "
					+ LockChecks.format(defaultLease));
		}
		this.engine = engine;
		this.keyPrefix = keyPrefix.isEmpty() ? "" : keyPrefix + ":";
		this.defaultWait = defaultWait;
		this.defaultLease = defaultLease;
		this.onLostLease = onLostLease;
	}

	/**
	 * Acquires a lock, waiting while another owner holds it.
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease a fixed lease; {@code null} for the default lease, renewed while held
	 * @return the handle; close it to release
	 * @throws LockAcquisitionException if the lock stayed held for the whole wait
	 */
	public LockHandle acquire(String key, @Nullable Duration wait, @Nullable Duration lease) {
		return acquire(key, wait, lease, Duration.ZERO);
	}

	/**
	 * Acquires a lock that stays taken for at least {@code minimumHold} after acquisition,
	 * even if released sooner, so that a scheduled job on nodes whose clocks or schedules
	 * differ a little runs once (the lease then ends on its own, no thread waits for it).
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease a fixed lease; {@code null} for the default lease, renewed while held
	 * @param minimumHold the minimum time the lock stays taken; zero for none
	 * @return the handle; close it to release
	 * @throws LockAcquisitionException if the lock stayed held for the whole wait
	 */
	public LockHandle acquire(String key, @Nullable Duration wait, @Nullable Duration lease, Duration minimumHold) {
		return this.engine.acquire(request(DbLockMode.LEASE, key, (wait != null) ? wait : this.defaultWait, lease,
				minimumHold));
	}

	/**
	 * Acquires a lock in a mode: in the {@link DbLockMode#LEASE lease mode} with the default
	 * lease, renewed while held; in the {@link DbLockMode#TRANSACTION transaction mode} in the
	 * thread's current Spring transaction, ended by its commit or rollback (closing the
	 * handle ends nothing); in the {@link DbLockMode#NAMED named mode} on a connection that
	 * holds it until the handle is closed; in the {@link DbLockMode#READ read},
	 * {@link DbLockMode#WRITE write} and {@link DbLockMode#FAIR fair} modes with the default
	 * lease, renewed while held (the fair mode in arrival order).
	 * <pre class="code">
	 * &#64;Transactional
	 * public void pay(long orderId) {
	 *     LockHandle lock = template.acquire(DbLockMode.TRANSACTION, "order:" + orderId, Duration.ofSeconds(3));
	 *     orders.markPaid(orderId, lock.fencingToken());
	 * } // the commit releases the lock
	 * </pre>
	 * @param mode how the lock is held
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @return the handle
	 * @throws LockAcquisitionException if the lock stayed held for the whole wait
	 * @throws DbLockException in the transaction mode, if no transaction is active
	 */
	public LockHandle acquire(DbLockMode mode, String key, @Nullable Duration wait) {
		return acquire(mode, key, wait, null);
	}

	/**
	 * Acquires a lock in a mode with a given lease: in the modes whose holders have a lease
	 * ({@link DbLockMode#hasLease()}: lease, read, write and fair), a fixed lease, or the
	 * default lease renewed while held for {@code null}; the other modes have no lease and
	 * take only {@code null}. See {@link #acquire(DbLockMode, String, Duration)}.
	 * <pre class="code">
	 * try (LockHandle lock = template.acquire(DbLockMode.READ, "rates", null, null)) {
	 *     return rates.current(); // readers of "rates" run together; a WRITE lock waits for them
	 * }
	 * try (LockHandle turn = template.acquire(DbLockMode.FAIR, "export", Duration.ofMinutes(1), null)) {
	 *     exports.runNext(turn.fencingToken()); // in the order the callers arrived
	 * }
	 * </pre>
	 * @param mode how the lock is held
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease a fixed lease; {@code null} for the default lease, renewed while held
	 * @return the handle
	 * @throws LockAcquisitionException if the lock stayed held for the whole wait
	 * @throws DbLockException for a lease in a mode that has none, and in the transaction
	 * mode if no transaction is active
	 */
	public LockHandle acquire(DbLockMode mode, String key, @Nullable Duration wait, @Nullable Duration lease) {
		if (!LockChecks.allowsLease(mode, lease)) {
			throw new DbLockException("Lock '" + key + "' in the " + mode + " mode has no lease, got " + LockChecks.format(lease));
		}
		return this.engine.acquire(request(mode, key, (wait != null) ? wait : this.defaultWait, lease, Duration.ZERO));
	}

	/**
	 * Acquires a lock in a mode if no other owner holds it, without waiting (as {@code acquire}).
	 * @param mode how the lock is held
	 * @param key the key, without the prefix
	 * @return the handle, or empty if the lock is held
	 */
	public Optional<LockHandle> tryAcquire(DbLockMode mode, String key) {
		return this.engine.tryAcquire(request(mode, key, Duration.ZERO, null, Duration.ZERO));
	}

	/**
	 * Runs an action while holding a lock in a mode; see
	 * {@link #acquire(DbLockMode, String, Duration)}. In the transaction mode the action runs
	 * in the caller's transaction and the lock ends with it, not with the action.
	 * @param <T> the action's result type
	 * @param mode how the lock is held
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param action the action
	 * @return the action's result
	 */
	public <T> @Nullable T execute(DbLockMode mode, String key, @Nullable Duration wait,
			Callable<? extends @Nullable T> action) {
		return callHolding(acquire(mode, key, wait), action);
	}

	/**
	 * Acquires one permit of a cluster-wide semaphore ({@link DbLockMode#SEMAPHORE}): up to
	 * {@code permits} callers hold one of the key at once, on every node. The permit has the
	 * default lease, renewed while held, and a fencing token of its own. A thread that holds
	 * a permit and asks again takes a second one.
	 * <pre class="code">
	 * try (LockHandle permit = template.acquirePermit("exports", 3, Duration.ofSeconds(5))) {
	 *     exports.run(); // at most three exports at once across the cluster
	 * }
	 * </pre>
	 * @param key the semaphore's key, without the prefix
	 * @param permits how many holders the key has at once; every caller of the key asks for
	 * the same number
	 * @param wait how long to wait while every permit is held; {@code null} for the default
	 * @return the permit's handle, whose {@link LockHandle#key()} is the permit's own key
	 * ({@code <key>#permit-<n>}); close it to release the permit
	 * @throws LockAcquisitionException if every permit stayed held for the whole wait
	 * @throws DbLockException for {@code permits < 1}, or a number other than the one recorded
	 * for the key
	 */
	public LockHandle acquirePermit(String key, int permits, @Nullable Duration wait) {
		return acquirePermit(key, permits, wait, null);
	}

	/**
	 * Acquires one permit of a semaphore with a given lease; see
	 * {@link #acquirePermit(String, int, Duration)}.
	 * @param key the semaphore's key, without the prefix
	 * @param permits how many holders the key has at once
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease a fixed lease; {@code null} for the default lease, renewed while held
	 * @return the permit's handle
	 * @throws LockAcquisitionException if every permit stayed held for the whole wait
	 */
	public LockHandle acquirePermit(String key, int permits, @Nullable Duration wait, @Nullable Duration lease) {
		return this.engine.acquire(permitRequest(key, permits, (wait != null) ? wait : this.defaultWait, lease));
	}

	/**
	 * Acquires one permit of a semaphore if one is free, without waiting; see
	 * {@link #acquirePermit(String, int, Duration)}.
	 * @param key the semaphore's key, without the prefix
	 * @param permits how many holders the key has at once
	 * @return the permit's handle, or empty if every permit is held
	 */
	public Optional<LockHandle> tryAcquirePermit(String key, int permits) {
		return this.engine.tryAcquire(permitRequest(key, permits, Duration.ZERO, null));
	}

	private LockRequest permitRequest(String key, int permits, Duration wait, @Nullable Duration lease) {
		return new LockRequest(storedKey(key), wait, (lease != null) ? lease : this.defaultLease, lease == null,
				Duration.ZERO, DbLockMode.SEMAPHORE, permits);
	}

	/**
	 * Acquires several keys at once in the lease mode, all or none, with the default lease
	 * renewed while held: taken in the order of their stored keys, so that two callers naming
	 * the same keys in opposite orders never deadlock; the wait covers them all, and a key that
	 * stays held past it releases those already taken before this throws. A key named twice is
	 * taken once.
	 * <pre class="code">
	 * try (LockHandle both = template.acquireAll(List.of("account:" + from, "account:" + to), Duration.ofSeconds(3))) {
	 *     accounts.transfer(from, to, amount, both.fencingToken(template.storedKey("account:" + from)));
	 * }
	 * </pre>
	 * @param keys the keys, without the prefix, at least one
	 * @param wait how long to wait for all of them; {@code null} for the default
	 * @return one handle that holds every key ({@link LockHandle#keys()},
	 * {@link LockHandle#fencingToken(String)}), held while every key is; closing it releases
	 * them all
	 * @throws LockAcquisitionException naming a key that stayed held for the whole wait
	 * @throws DbLockException for no key or a blank one
	 */
	public LockHandle acquireAll(Collection<String> keys, @Nullable Duration wait) {
		return acquireAll(DbLockMode.LEASE, keys, wait, null);
	}

	/**
	 * Acquires several keys at once in a mode, all or none; see
	 * {@link #acquireAll(Collection, Duration)}. Every mode but the transaction mode (whose
	 * row locks end with the transaction alone, so that a partial acquisition could not be
	 * given back) and the semaphore mode (whose permits have keys of their own) can take
	 * part ({@link LockChecks#allowsSeveralKeys}).
	 * @param mode how each key is held
	 * @param keys the keys, without the prefix, at least one
	 * @param wait how long to wait for all of them; {@code null} for the default
	 * @param lease a fixed lease for each; {@code null} for the default lease, renewed while
	 * held (only {@code null} in a mode without a lease)
	 * @return one handle that holds every key
	 * @throws LockAcquisitionException naming a key that stayed held for the whole wait
	 * @throws DbLockException for no key, a blank one, a mode that does not take part or a
	 * lease in a mode that has none
	 */
	public LockHandle acquireAll(DbLockMode mode, Collection<String> keys, @Nullable Duration wait,
			@Nullable Duration lease) {
		if (!LockChecks.allowsLease(mode, lease)) {
			throw new DbLockException("Locks " + keys + " in the " + mode + " mode have no lease, got "
					+ LockChecks.format(lease));
		}
		Duration waitTime = (wait != null) ? wait : this.defaultWait;
		List<LockRequest> requests = new ArrayList<>(keys.size());
		for (String key : keys) {
			requests.add(request(mode, key, waitTime, lease, Duration.ZERO));
		}
		return this.engine.acquireAll(requests);
	}

	/**
	 * Acquires a lock if no other owner holds it, without waiting.
	 * @param key the key, without the prefix
	 * @param lease a fixed lease; {@code null} for the default lease, renewed while held
	 * @return the handle, or empty if the lock is held
	 */
	public Optional<LockHandle> tryAcquire(String key, @Nullable Duration lease) {
		return this.engine.tryAcquire(request(DbLockMode.LEASE, key, Duration.ZERO, lease, Duration.ZERO));
	}

	/**
	 * Runs an action while holding a lock with the default wait and a renewed lease.
	 * @param <T> the action's result type
	 * @param key the key, without the prefix
	 * @param action the action
	 * @return the action's result
	 */
	public <T> @Nullable T execute(String key, Callable<? extends @Nullable T> action) {
		return execute(key, null, null, action);
	}

	/**
	 * Runs an action while holding a lock, and releases it afterwards.
	 * @param <T> the action's result type
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease a fixed lease; {@code null} for the default lease, renewed while held
	 * @param action the action
	 * @return the action's result
	 */
	public <T> @Nullable T execute(String key, @Nullable Duration wait, @Nullable Duration lease,
			Callable<? extends @Nullable T> action) {
		return callHolding(acquire(key, wait, lease), action);
	}

	/**
	 * Runs an action if the lock can be had without waiting, with a renewed lease; as
	 * {@code execute} otherwise.
	 * @param key the key, without the prefix
	 * @param action the action
	 * @return whether the action ran
	 */
	public boolean tryExecute(String key, Runnable action) {
		Optional<LockHandle> handle = tryAcquire(key, null);
		handle.ifPresent((held) -> callHolding(held, () -> {
			action.run();
			return null;
		}));
		return handle.isPresent();
	}

	/**
	 * A {@link Lock} for code written against the JDK's lock interface, with the default
	 * lease renewed while held. {@code lock()} waits until acquired, {@code tryLock()}
	 * makes one attempt; interrupts are honoured as the interface says. Reentrant for the
	 * thread that holds it; {@code unlock()} from another thread throws
	 * {@link IllegalMonitorStateException}; conditions are not supported. Every call for
	 * one key gives a lock that acts as the same one: {@code obtain(k).lock()} then
	 * {@code obtain(k).unlock()} releases. Its {@link DbLockLock#lock(Duration)} and
	 * {@link DbLockLock#tryLock(Duration, Duration)} take the key with a fixed lease instead.
	 * @param key the key, without the prefix
	 * @return the lock
	 */
	public DbLockLock obtain(String key) {
		storedKey(key);
		return new DbLockLock(this, key, DbLockMode.LEASE, this.lockHandles);
	}

	/**
	 * A {@link ReadWriteLock} for code written against the JDK's interface: its read lock
	 * takes the key in the {@link DbLockMode#READ read mode}, its write lock in the
	 * {@link DbLockMode#WRITE write mode}, each with the default lease renewed while held and
	 * otherwise as {@link #obtain} does. A thread that holds the write lock may take the read
	 * lock (it counts on the write lock, whose row stays until both are unlocked); a thread
	 * that holds only the read lock and asks for the write lock gets a
	 * {@link LockUpgradeException}. Every call for one key gives locks that act as the same.
	 * @param key the key, without the prefix
	 * @return the read/write lock
	 */
	public ReadWriteLock readWriteLock(String key) {
		storedKey(key);
		return DbLockLock.readWriteLock(this, key, this.lockHandles);
	}

	/**
	 * Applies the lost-lease policy to a released handle: for code that acquires with
	 * {@link #acquire} and wants the same report as {@code execute}.
	 * @param <T> the result type
	 * @param handle the handle, closed
	 * @param result what the work under the lock returned
	 * @return the result
	 * @throws LockLostException if the lease was lost and the policy is
	 * {@link LostLeasePolicy#THROW} or {@link LostLeasePolicy#ROLLBACK}
	 */
	public <T> @Nullable T checkNotLost(LockHandle handle, @Nullable T result) {
		if (this.onLostLease != LostLeasePolicy.LOG && handle.lostSince().isPresent()) {
			throw new LockLostException(handle.key(), handle.lostSince().get(), result);
		}
		return result;
	}

	/**
	 * The key as stored: {@code [key-prefix:]key}, checked against the lock table.
	 * @param key the key, without the prefix
	 * @return the stored key
	 * @throws DbLockException if the key is blank or too long
	 */
	public String storedKey(String key) {
		String stored = this.keyPrefix + LockChecks.checkKey(key);
		this.engine.checkKey(stored);
		return stored;
	}

	LockEngine engine() {
		return this.engine;
	}

	Duration defaultLease() {
		return this.defaultLease;
	}

	LockRequest request(DbLockMode mode, String key, Duration wait, @Nullable Duration lease, Duration minimumHold) {
		return new LockRequest(storedKey(key), wait, (lease != null) ? lease : this.defaultLease, lease == null,
				minimumHold, mode);
	}

	private <T> @Nullable T callHolding(LockHandle handle, Callable<? extends @Nullable T> action) {
		T result;
		try {
			result = action.call();
		}
		catch (RuntimeException | Error ex) {
			closeAfterFailure(handle, ex);
			throw ex;
		}
		catch (Exception ex) {
			closeAfterFailure(handle, ex);
			throw new UndeclaredThrowableException(ex);
		}
		return release(handle, result);
	}

	/**
	 * Releases a handle after the work under it returned, and applies the lost-lease policy
	 * ({@link #checkNotLost}). A lease that was lost is reported as such even when its
	 * release could not be confirmed too (a stalled database does both): the
	 * {@link LockLostException}, with the {@link LockReleaseException} added as suppressed.
	 * @param <T> the result type
	 * @param handle the handle
	 * @param result what the work returned
	 * @return the result
	 * @throws LockLostException per the lost-lease policy
	 * @throws LockReleaseException if the release could not be confirmed, carrying the
	 * result
	 */
	public <T> @Nullable T release(LockHandle handle, @Nullable T result) {
		try {
			handle.close();
		}
		catch (LockReleaseException ex) {
			LockReleaseException failed = ex.withResult(result);
			try {
				checkNotLost(handle, result);
			}
			catch (LockLostException lost) {
				lost.addSuppressed(failed);
				throw lost;
			}
			throw failed;
		}
		return checkNotLost(handle, result);
	}

	/**
	 * Releases a handle after the work under it threw: a release that could not be confirmed
	 * is added to the work's exception as suppressed, which is then to be thrown.
	 * @param handle the handle
	 * @param failure what the work threw
	 */
	public static void closeAfterFailure(LockHandle handle, Throwable failure) {
		try {
			handle.close();
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
		}
	}

}
