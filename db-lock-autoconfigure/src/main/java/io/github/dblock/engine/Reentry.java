package io.github.dblock.engine;

import io.github.dblock.LockRequest;

/**
 * What a thread that holds a key with a lease gets when it asks for the key again (its
 * handle still open, or its release waiting for its transaction): the one rule of the lease
 * and fair modes.
 */
enum Reentry {

	/** The hold as it is: its lease serves the request. */
	REENTER,

	/** The hold, its fixed lease extended to the request's first. */
	EXTEND,

	/** Refused: a renewed lease asked for inside a fixed one. */
	REFUSE,

	/** None: its lease may have ended; it is ended, and the key asked for afresh. */
	STALE;

	/**
	 * Decides.
	 * @param valid whether the hold's lease is valid as this JVM knows it
	 * @param renewed whether the hold's lease is renewed
	 * @param remainingNanos how long the hold's lease lasts yet on the local clock
	 * @param request the new request
	 * @return what the thread gets
	 */
	static Reentry of(boolean valid, boolean renewed, long remainingNanos, LockRequest request) {
		if (!valid) {
			return STALE;
		}
		if (renewed) {
			return REENTER;
		}
		if (request.renewed()) {
			return REFUSE;
		}
		return (remainingNanos >= request.lease().toNanos()) ? REENTER : EXTEND;
	}

}
