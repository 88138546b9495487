package io.github.dblock.engine;

import java.time.Instant;
import java.util.Optional;

/**
 * One acquisition's view of a fair lock ({@link io.github.dblock.DbLockMode#FAIR}): its
 * fencing token is its ticket's number, and it expires when its ticket's lease ends, as
 * this JVM knows it (never later than the database's end).
 */
final class FairHandle extends ListedHandle {

	/** What the handle shows of its ticket. */
	interface Hold {

		String key();

		long token();

		boolean isHeld();

		Instant expiresAt();

		Optional<Instant> lostSince();

		/** One handle of the hold is closed. */
		void countDown();

	}

	private final Hold hold;

	FairHandle(Hold hold) {
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
		return this.hold.expiresAt();
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
