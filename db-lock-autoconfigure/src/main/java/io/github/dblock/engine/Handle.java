package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dblock.DbLockContextHolder;
import io.github.dblock.LockHandle;
import io.github.dblock.jdbc.HeldRow;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition's view of a hold, in every mode: listed among the acquiring thread's
 * {@link HeldLocks} until closed; closing it twice counts its hold down once.
 */
final class Handle implements LockHandle {

	/** What a handle shows of its mode's hold, and how it gives it back. */
	interface Source {

		String key();

		/** The fencing token (for the transaction and named modes, drawn on first use). */
		long token();

		/**
		 * When the hold's lease ends as this JVM knows it; {@link Instant#MAX} for a hold
		 * without a lease (the transaction and named modes).
		 */
		default Instant expiresAt() {
			return Instant.MAX;
		}

		boolean isHeld();

		/** How long it stays held on the local clock, in nanoseconds; {@code Long.MAX_VALUE} without a lease. */
		default long remainingNanos() {
			return Long.MAX_VALUE;
		}

		Optional<Instant> lostSince();

		/** One handle of the hold is closed. */
		void countDown();

		/**
		 * The row in which the hold's lease is kept, for the commit guard; {@code null} for a
		 * hold without one (the transaction and named modes).
		 */
		default @Nullable HeldRow row() {
			return null;
		}

	}

	private final Source hold;

	private final AtomicBoolean open = new AtomicBoolean(true);

	/** The acquiring thread's handles, in which this one is listed until closed. */
	private final DbLockContextHolder.Entry context;

	Handle(Source hold) {
		this.hold = hold;
		this.context = HeldLocks.push(this);
	}

	@Override
	public String key() {
		return this.hold.key();
	}

	/** What the handle shows. */
	Source source() {
		return this.hold;
	}

	@Override
	public long fencingToken() {
		return this.hold.token();
	}

	@Override
	public Instant expiresAt() {
		return this.hold.expiresAt();
	}

	@Override
	public boolean isHeld() {
		return this.open.get() && this.hold.isHeld();
	}

	@Override
	public Duration remaining() {
		if (!isHeld()) {
			return Duration.ZERO;
		}
		long nanos = this.hold.remainingNanos();
		return (nanos == Long.MAX_VALUE) ? FOREVER : Duration.ofNanos(Math.max(nanos, 0));
	}

	@Override
	public Optional<Instant> lostSince() {
		return this.hold.lostSince();
	}

	@Override
	public void close() {
		if (this.open.compareAndSet(true, false)) {
			HeldLocks.remove(this.context, this);
			this.hold.countDown();
		}
	}

	/** Names the token only where it is known without a statement (a leased hold's). */
	@Override
	public String toString() {
		String token = (this.hold instanceof Hold leased) ? ", token=" + leased.token() : "";
		return "LockHandle[key=" + key() + token + ", expiresAt=" + expiresAt() + "]";
	}

}
