package io.github.dblock;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

import io.github.dblock.core.LockEngine;
import org.jspecify.annotations.Nullable;

/**
 * Programmatic access to db-lock, in the spirit of Spring's {@code TransactionTemplate}.
 * Keys given here are stored as {@code [key-prefix:]key}. A {@code null} wait or lease
 * means {@code db-lock.default-wait} or {@code db-lock.default-lease}.
 *
 * <pre class="code">
 * Receipt receipt = template.execute("order:" + id, Duration.ofSeconds(3), null, () -> payments.charge(id));
 * </pre>
 */
public class DbLockTemplate {

	private static final Pattern KEY_PREFIX = Pattern.compile("[A-Za-z0-9_.\\-]{0,64}");

	private final LockEngine engine;

	private final String keyPrefix;

	private final Duration defaultWait;

	private final Duration defaultLease;

	/**
	 * Creates a template.
	 * @param engine the engine
	 * @param keyPrefix prepended to every key with a colon; empty for none. Letters,
	 * digits, {@code _ . -}, at most 64 characters
	 * @param defaultWait the wait when none is given
	 * @param defaultLease the lease when none is given
	 */
	public DbLockTemplate(LockEngine engine, String keyPrefix, Duration defaultWait, Duration defaultLease) {
		if (!KEY_PREFIX.matcher(keyPrefix).matches()) {
			throw new IllegalArgumentException("Invalid db-lock key prefix '" + keyPrefix
					+ "': expected letters, digits, '_', '.' or '-', at most 64 characters");
		}
		if (defaultWait.isNegative()) {
			throw new IllegalArgumentException("db-lock default wait must not be negative, got " + defaultWait);
		}
		if (defaultLease.isNegative() || defaultLease.isZero()) {
			throw new IllegalArgumentException("db-lock default lease must be positive, got " + defaultLease);
		}
		this.engine = engine;
		this.keyPrefix = keyPrefix.isEmpty() ? "" : keyPrefix + ":";
		this.defaultWait = defaultWait;
		this.defaultLease = defaultLease;
	}

	/**
	 * Acquires a lock, waiting while another owner holds it.
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease the lease; {@code null} for the default
	 * @return the handle; close it to release
	 * @throws LockAcquisitionException if the lock stayed held for the whole wait
	 */
	public LockHandle acquire(String key, @Nullable Duration wait, @Nullable Duration lease) {
		return this.engine.acquire(storedKey(key), orDefault(wait, this.defaultWait), orDefault(lease, this.defaultLease));
	}

	/**
	 * Acquires a lock if no other owner holds it, without waiting.
	 * @param key the key, without the prefix
	 * @param lease the lease; {@code null} for the default
	 * @return the handle, or empty if the lock is held
	 */
	public Optional<LockHandle> tryAcquire(String key, @Nullable Duration lease) {
		return this.engine.tryAcquire(storedKey(key), orDefault(lease, this.defaultLease));
	}

	/**
	 * Runs an action while holding a lock, and releases it afterwards.
	 * @param <T> the action's result type
	 * @param key the key, without the prefix
	 * @param wait how long to wait; {@code null} for the default
	 * @param lease the lease; {@code null} for the default
	 * @param action the action
	 * @return the action's result
	 * @throws LockAcquisitionException if the lock stayed held for the whole wait
	 * @throws UndeclaredThrowableException wrapping a checked exception of the action;
	 * unchecked exceptions and errors pass as they are
	 */
	public <T> @Nullable T execute(String key, @Nullable Duration wait, @Nullable Duration lease,
			Callable<? extends @Nullable T> action) {
		try (LockHandle handle = acquire(key, wait, lease)) {
			return action.call();
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw new UndeclaredThrowableException(ex);
		}
	}

	/**
	 * The key as stored: {@code [key-prefix:]key}, checked against the lock table.
	 * @param key the key, without the prefix
	 * @return the stored key
	 * @throws DbLockException if the key is blank or too long
	 */
	public String storedKey(String key) {
		if (key == null || key.isBlank()) {
			throw new DbLockException("Lock key must not be blank, got '" + key + "'");
		}
		String stored = this.keyPrefix + key;
		this.engine.checkKey(stored);
		return stored;
	}

	private static Duration orDefault(@Nullable Duration value, Duration defaultValue) {
		return (value != null) ? value : defaultValue;
	}

}
