package io.github.dblock.engine;

import java.time.Duration;

import io.github.dblock.DbLockMode;

/**
 * A lock a thread of this JVM holds now, as {@link LockEngine#held()} lists it.
 *
 * @param key the stored key
 * @param mode how it is held
 * @param thread the name of the thread that took it
 * @param heldFor how long it has been held by that thread
 * @since 0.1.0
 */
public record HeldKey(String key, DbLockMode mode, String thread, Duration heldFor) {
}
