package io.github.dblock.core;

import java.time.Instant;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.dblock.LockHandle;

/** One acquisition's view of a hold: closing it twice counts down once. */
final class Handle implements LockHandle {

	private final Hold hold;

	private final AtomicBoolean open = new AtomicBoolean(true);

	/** The acquiring thread's handles, in which this one is listed until closed. */
	private final Deque<Handle> context;

	Handle(Hold hold) {
		this.hold = hold;
		this.context = HeldLocks.push(this);
	}

	@Override
	public String key() {
		return this.hold.lease.lease.key();
	}

	@Override
	public long fencingToken() {
		return this.hold.fencingToken();
	}

	@Override
	public Instant expiresAt() {
		return this.hold.lease.expiresAt;
	}

	@Override
	public boolean isHeld() {
		return this.open.get() && this.hold.isHeld();
	}

	@Override
	public Optional<Instant> lostSince() {
		return this.hold.lostSince();
	}

	boolean isOpen() {
		return this.open.get();
	}

	@Override
	public void close() {
		if (this.open.compareAndSet(true, false)) {
			HeldLocks.remove(this.context, this);
			this.hold.countDown();
		}
	}

	@Override
	public String toString() {
		return "LockHandle[key=" + key() + ", token=" + fencingToken() + ", expiresAt=" + expiresAt() + "]";
	}

}
