package io.github.dblock.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * The time by which a lock call's statements must have returned, for the thread making
 * the call: the end of its wait plus the statement timeout. An acquisition runs several
 * statements (a hand-on's extension or release, attempts of several statements each, a
 * waiter's clean-up); each is bounded by the statement timeout, but without this they
 * could add up past the bound a caller is promised: its wait plus the statement timeout.
 * While a deadline is open on the thread, {@link LockConnections} gives each statement
 * (and, from a Hikari pool, its wait for a connection) the statement timeout or what is
 * left until the deadline, whichever is less, and sends no acquisition attempt once the
 * deadline has passed. A release opens one of its own, of the statement timeout, unless
 * its thread has one that ends sooner.
 * <p>
 * Opened by the engine around an acquisition; a thread's deadlines nest. On virtual
 * threads as on platform threads: it is a thread-local value, set and cleared on the
 * calling thread.
 *
 * @since 0.1.0
 */
public final class StatementDeadline implements AutoCloseable {

	private static final ThreadLocal<@Nullable StatementDeadline> current = new ThreadLocal<>();

	private final long waitEndNanos;

	private final @Nullable StatementDeadline outer;

	private StatementDeadline(long waitEndNanos, @Nullable StatementDeadline outer) {
		this.waitEndNanos = waitEndNanos;
		this.outer = outer;
	}

	/**
	 * Opens a deadline on the calling thread until {@link #close()}.
	 * @param waitEndNanos when the call's wait ends, in {@link System#nanoTime()}'s terms;
	 * its statements must have returned by then plus the statement timeout
	 * @return the open deadline, to be closed on the same thread
	 */
	public static StatementDeadline open(long waitEndNanos) {
		StatementDeadline deadline = new StatementDeadline(waitEndNanos, current.get());
		current.set(deadline);
		return deadline;
	}

	/**
	 * Opens a deadline on the calling thread until {@link #close()}, unless one that ends
	 * sooner is open already: then that one stays in force (as a nested deadline).
	 * @param waitEndNanos when the wait ends, in {@link System#nanoTime()}'s terms
	 * @return the open deadline, to be closed on the same thread
	 */
	static StatementDeadline openAtMost(long waitEndNanos) {
		StatementDeadline outer = current.get();
		return open((outer != null && outer.waitEndNanos - waitEndNanos < 0) ? outer.waitEndNanos : waitEndNanos);
	}

	/**
	 * How long a statement sent now may take: the statement timeout, or less when the
	 * thread's open deadline comes first.
	 * @param statementTimeoutMillis the statement timeout
	 * @param waitMillis how long the statement itself may wait in the server beyond it
	 * @return milliseconds, {@code 0} or less if the deadline has passed
	 */
	static long millisLeft(long statementTimeoutMillis, long waitMillis) {
		long limit = statementTimeoutMillis + waitMillis;
		StatementDeadline deadline = current.get();
		if (deadline == null) {
			return limit;
		}
		long left = (deadline.waitEndNanos - System.nanoTime()) / 1_000_000 + statementTimeoutMillis;
		return Math.min(limit, left);
	}

	/** Closes this deadline; an outer one opened before it is in force again. */
	@Override
	public void close() {
		if (this.outer != null) {
			current.set(this.outer);
		}
		else {
			current.remove();
		}
	}

}
