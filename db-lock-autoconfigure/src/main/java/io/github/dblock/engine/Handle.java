package io.github.dblock.engine;

import java.time.Instant;
import java.util.Optional;

/** One acquisition's view of a lease hold: closing it twice counts down once. */
final class Handle extends ListedHandle {

	private final Hold hold;

	Handle(Hold hold) {
		this.hold = hold;
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
		return isOpen() && this.hold.isHeld();
	}

	@Override
	public Optional<Instant> lostSince() {
		return this.hold.lostSince();
	}

	@Override
	void closed() {
		this.hold.countDown();
	}

	@Override
	public String toString() {
		return "LockHandle[key=" + key() + ", token=" + fencingToken() + ", expiresAt=" + expiresAt() + "]";
	}

}
