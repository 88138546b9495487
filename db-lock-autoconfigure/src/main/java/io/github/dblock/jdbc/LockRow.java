package io.github.dblock.jdbc;

import java.time.Instant;

/**
 * One row of the lock table, as {@link LockRepository#rows(int)} reads it.
 *
 * @param key the stored lock key
 * @param owner the owner id of the acquisition that wrote it
 * @param token the fencing token the database gave
 * @param acquiredAt when it was taken, in the database's time
 * @param expiresAt when its lease ends, in the database's time (it may have ended already:
 * the reaper deletes such rows)
 *
 * @since 0.1.0
 */
public record LockRow(String key, String owner, long token, Instant acquiredAt, Instant expiresAt) {
}
