package io.github.dblock.engine;

import io.github.dblock.DbLockMode;
import org.jspecify.annotations.Nullable;

/**
 * Told what a {@link LockEngine} does, for metrics and tracing: added with
 * {@link LockEngine#addListener(LockListener)}. Every method has a default that does
 * nothing. A listener is called on the thread that acquires or releases (or on a watchdog
 * thread for a lease found lost), so it must be quick and must not block; an exception it
 * throws is logged and never reaches the lock call.
 *
 * @since 0.1.0
 */
public interface LockListener {

	/** Why an acquisition ended without the lock. */
	enum Outcome {

		/** Another owner held the key for the whole wait. */
		TIMED_OUT,

		/** The attempt failed: the database, an invalid key, an interrupt, a shut-down engine. */
		FAILED

	}

	/**
	 * A call acquired a key, a re-entry included.
	 * @param key the stored key
	 * @param mode how it is held
	 * @param waitedNanos how long the call took, in nanoseconds
	 */
	default void acquired(String key, DbLockMode mode, long waitedNanos) {
	}

	/**
	 * A call ended without the key.
	 * @param key the stored key
	 * @param mode how it was asked for
	 * @param outcome why
	 * @param waitedNanos how long the call took, in nanoseconds
	 */
	default void notAcquired(String key, DbLockMode mode, Outcome outcome, long waitedNanos) {
	}

	/**
	 * An attempt to acquire found the key held by another owner, and the call backs off
	 * and tries again (its wait has not run out): one event per retry.
	 * @param key the stored key
	 * @param mode how it is asked for
	 */
	default void contended(String key, DbLockMode mode) {
	}

	/**
	 * A thread's hold of a key ended: its last handle was closed (after its transaction, if
	 * it was closed in one), or, in the transaction mode, its transaction ended. Re-entries
	 * are part of the outer hold.
	 * @param key the stored key
	 * @param mode how it was held
	 * @param heldNanos how long the thread held it, in nanoseconds
	 */
	default void released(String key, DbLockMode mode, long heldNanos) {
	}

	/**
	 * A held lock was found lost: its lease taken over, deleted or run out, its named lock's
	 * connection gone, or it was given up at shutdown while held.
	 * @param key the stored key
	 * @param mode how it was held
	 */
	default void lost(String key, DbLockMode mode) {
	}

	/**
	 * A hold began in the database: a row of the lock table, a row lock or a named lock
	 * taken for this JVM (not a re-entry, not a hand-on between its threads, which share the
	 * hold). Called before the acquisition call returns, on its thread.
	 * @param key the stored key
	 * @param mode how it is held
	 * @param owner the acquisition's owner id, unique per hold (in the lock table for the
	 * lease mode)
	 * @param token its fencing token, or {@code null} where it is drawn only when read (the
	 * transaction and named modes)
	 */
	default void holdStarted(String key, DbLockMode mode, String owner, @Nullable Long token) {
	}

	/**
	 * A hold that began with {@link #holdStarted} ended, as far as this JVM knows: released
	 * (its row deleted, its transaction ended, its named lock released), or found lost. A
	 * hold whose end could not be written (the database failed) ends at its lease's expiry
	 * and is not reported here.
	 * @param key the stored key
	 * @param mode how it was held
	 * @param owner the owner id given when it began
	 * @param lost whether it was found lost rather than released
	 */
	default void holdEnded(String key, DbLockMode mode, String owner, boolean lost) {
	}

	/**
	 * The reaper deleted rows whose lease had ended (for a listener added to the reaper,
	 * {@code io.github.dblock.maintenance.LockReaper}).
	 * @param rows how many, more than zero
	 */
	default void reaped(int rows) {
	}

}
