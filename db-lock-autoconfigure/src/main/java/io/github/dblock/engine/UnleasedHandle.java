package io.github.dblock.engine;

import java.time.Instant;
import java.util.Optional;

/**
 * One acquisition's view of a lock that has no lease (the transaction and named modes):
 * {@link #expiresAt()} is {@link Instant#MAX}, the lock lasting until its transaction ends
 * or it is released.
 */
final class UnleasedHandle extends ListedHandle {

	/** What the handle shows of its mode's hold. */
	interface Hold {

		String key();

		/** The fencing token, drawn on first use. */
		long token();

		boolean isHeld();

		Optional<Instant> lostSince();

		/** One handle of the hold is closed. */
		void countDown();

	}

	private final Hold hold;

	UnleasedHandle(Hold hold) {
		this.hold = hold;
	}

	@Override
	public String key() {
		return this.hold.key();
	}

	@Override
	public long fencingToken() {
		return this.hold.token();
	}

	@Override
	public Instant expiresAt() {
		return Instant.MAX;
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

}
