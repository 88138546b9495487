package io.github.dblock.jdbc.dialect;

import java.time.Instant;

/**
 * The row an acquiring statement wrote for its owner.
 *
 * @param token the fencing token drawn for it
 * @param expiresAt the end of its lease, by the database's clock (where the database does
 * not return it, an estimate never later than the database's)
 * @since 0.1.0
 */
public record AcquiredRow(long token, Instant expiresAt) {
}
