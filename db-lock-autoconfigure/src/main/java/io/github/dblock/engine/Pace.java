package io.github.dblock.engine;

/**
 * When one thread's next attempt at a key that another owner holds is sent: after the
 * {@link Backoff back-off}'s pause, except while this JVM waits for a key it gave up at the
 * end of a turn ({@link LocalTurn}). The other JVM then holds the key for a turn at least
 * (counted from when it took it, after the cede) and gives it up at its first release after
 * that, if this JVM asked meanwhile: no pause runs past the moment a turn after the cede
 * ends, and from that moment the back-off starts again from its first pause, so that the
 * key coming back is found within a few milliseconds rather than within the longest pause.
 * Only when attempts are sent changes, never what one does; a JVM whose turn is longer is
 * found by the back-off as before.
 * <p>
 * One per polling thread and wait; not thread-safe.
 */
final class Pace {

	private final Backoff backoff;

	private final long turnNanos;

	private final long holdBackNanos;

	private long heldBackUntil;

	private long aim;

	private boolean aiming;

	private int refused;

	/**
	 * Creates the pace of one wait.
	 * @param settings the back-off, the turn and the hold-back after a cede
	 */
	Pace(LockEngineSettings settings) {
		this.backoff = settings.backoff();
		this.turnNanos = settings.localTurn().toNanos();
		this.holdBackNanos = settings.holdBack().toNanos();
	}

	/**
	 * Tells of the hold-back that preceded the next attempt ({@link LocalTurn#holdBackUntil()}),
	 * from a cede of this JVM; the same one told again changes nothing.
	 * @param until the {@link System#nanoTime()} the hold-back lasted until, 0 for none
	 */
	void heldBackUntil(long until) {
		if (until != 0 && until != this.heldBackUntil) {
			this.heldBackUntil = until;
			// the cede came a hold-back before; the other JVM's turn began after it
			this.aim = until - this.holdBackNanos + this.turnNanos;
			this.aiming = true;
		}
	}

	/**
	 * The pause after a refused attempt.
	 * @param now {@link System#nanoTime()}
	 * @return the pause in nanoseconds
	 */
	long pauseNanos(long now) {
		if (this.aiming && now - this.aim >= 0) {
			this.aiming = false;
			this.refused = 0;
		}
		long pause = this.backoff.delayNanos(this.refused);
		if (this.refused < Integer.MAX_VALUE) {
			this.refused++;
		}
		return (this.aiming && pause > this.aim - now) ? this.aim - now : pause;
	}

}
