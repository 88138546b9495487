package io.github.dblock.engine;

import io.github.dblock.DbLockMode;

/**
 * A key that threads of this JVM wait for now, in this JVM, as {@link LockEngine#waiting()}
 * lists it: behind another of its threads that holds the key or asks the database for it.
 *
 * @param key the stored key
 * @param mode the mode they want it in
 * @param threads how many threads wait, at least one
 * @since 0.1.0
 */
public record WaitingKey(String key, DbLockMode mode, int threads) {
}
