package io.github.dblock.engine;

import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;

import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.HeldRow;
import io.github.dblock.jdbc.Lease;
import org.jspecify.annotations.Nullable;

/**
 * One local acquisition of a lease, by one thread, with its reentrant count; the lease is
 * released (or handed on) when the count comes back to zero, after the transaction if
 * there is one ({@link CountedHold}).
 */
final class Hold extends CountedHold {

	final HeldLease lease;

	final LockRequest request;

	/** Which local holder of the lease this is: 0 for the one that took it from the database. */
	final int sequence;

	final Thread thread = Thread.currentThread();

	/** The {@link System#nanoTime()} this hold began. */
	final long startedAt = System.nanoTime();

	private final Consumer<Hold> release;

	/** When the lease was found lost (or ended) while this hold had it. */
	private volatile @Nullable Instant lostSince;

	/** Released or handed on: the lease is no longer this hold's. */
	volatile boolean done;

	Hold(HeldLease lease, LockRequest request, int sequence, Consumer<Hold> release) {
		this.lease = lease;
		this.request = request;
		this.sequence = sequence;
		this.release = release;
		lease.holder = this;
	}

	@Override
	public String key() {
		return this.lease.lease.key();
	}

	@Override
	public Instant expiresAt() {
		return this.lease.expiresAt;
	}

	/** Larger than every earlier holder's: the database's token, then the local sequence. */
	@Override
	public long token() {
		return (this.lease.lease.token() << HeldLease.HANDOFF_BITS) | this.sequence;
	}

	/** Whether its thread holds it: counted up, or released only when its transaction completes. */
	boolean isActive() {
		return !this.done && isCountedOrDeferred();
	}

	@Override
	protected void countedDown() {
		this.release.accept(this);
	}

	void lost(Instant at) {
		if (this.lostSince == null) {
			this.lostSince = at;
		}
	}

	@Override
	public boolean isHeld() {
		return !this.done && this.lostSince == null && this.lease.isValid();
	}

	/**
	 * The row, even once the hold is done: an open handle of a hold that another thread
	 * ended (at shutdown) must fail its transaction's guard, which finds the row gone.
	 */
	@Override
	public @Nullable HeldRow row() {
		HeldRow.Table table = switch (this.lease.mode) {
			case LEASE, SEMAPHORE -> HeldRow.Table.LEASE;
			case READ, WRITE -> HeldRow.Table.READ_WRITE;
			default -> null;
		};
		if (table == null) {
			return null;
		}
		Lease current = this.lease.lease;
		return new HeldRow(table, current.key(), current.owner(), current.token());
	}

	@Override
	public long remainingNanos() {
		return this.lease.remainingNanos();
	}

	@Override
	public Optional<Instant> lostSince() {
		Instant lost = this.lostSince;
		if (lost == null && !this.done && this.lease.remainingNanos() < 0) {
			// its time is over on the local clock: another owner may hold the key
			lost = this.lease.deadlineInstant();
		}
		return Optional.ofNullable(lost);
	}

}
