package io.github.dblock.jdbc;

import java.time.Instant;

/**
 * The outcome of a {@link SlotRepository#claim claim} of a slot.
 *
 * @param databaseTime the database's now, read by the claim
 * @param slot the slot that time fell in
 * @param claimed whether this claim was the slot's first, and so its run is the caller's
 * @since 0.1.0
 */
public record SlotClaim(Instant databaseTime, Instant slot, boolean claimed) {
}
