package io.github.dblock.jdbc;

import java.time.Instant;

/**
 * A lease granted by the database: who holds a key, with which fencing token, until when.
 *
 * @param key the stored lock key
 * @param owner the owner id given for this acquisition
 * @param token the fencing token, larger than every earlier token of the key
 * @param expiresAt the end of the lease, in the database's time
 *
 * @since 0.1.0
 */
public record Lease(String key, String owner, long token, Instant expiresAt) {
}
