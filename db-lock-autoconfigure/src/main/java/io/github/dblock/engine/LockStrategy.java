package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import org.jspecify.annotations.Nullable;

/**
 * One kind of lock under the {@link LockEngine}, which checks the request, observes the
 * call, tells the listeners and dispatches to the strategy of the request's
 * {@link DbLockMode}. A strategy takes the key (reentrancy, local queueing, waiting, the
 * database's part), and hands out handles whose release it performs. Most strategies
 * extend {@link AbstractLockStrategy}, which writes the shutdown and the waiting once.
 */
interface LockStrategy {

	/**
	 * The modes this strategy serves.
	 * @return the modes, at least one
	 */
	List<DbLockMode> modes();

	/**
	 * Takes a key, waiting up to the request's wait while another owner holds it.
	 * @param request the request, its key checked
	 * @return the handle, or {@code null} if the key stayed held for the whole wait
	 * @throws InterruptedException if the thread is interrupted while waiting
	 * @throws io.github.dblock.DbLockException if the database failed or the engine is
	 * shut down
	 */
	@Nullable LockHandle acquire(LockRequest request) throws InterruptedException;

	/**
	 * Why the strategy cannot be used with this database, asked of it now: for a check at
	 * start-up.
	 * @return the reason, or empty if it can
	 */
	Optional<String> unavailable();

	/**
	 * Adds the keys held now by the threads of this JVM.
	 * @param held where to add them
	 * @param now {@link System#nanoTime()} now
	 */
	void held(List<HeldKey> held, long now);

	/**
	 * Adds the keys that threads of this JVM wait for now in this JVM (not in the
	 * database), each with how many wait: none where no thread waits.
	 * @param waiting where to add them
	 */
	void waiting(List<WaitingKey> waiting);

	/**
	 * How many threads of this JVM wait now for a key in this JVM (not in the database).
	 * @return the number of local waiters
	 */
	default int waiting() {
		List<WaitingKey> waiting = new ArrayList<>();
		waiting(waiting);
		return waiting.stream().mapToInt(WaitingKey::threads).sum();
	}

	/**
	 * Refuses new acquisitions and sends away the threads waiting for a key, at once.
	 */
	void refuse();

	/**
	 * Gives holders until {@code deadline} to release, then ends what is still held (marked
	 * lost) and stops what the strategy runs in the background. Called after
	 * {@link #refuse()}.
	 * @param deadline {@link System#nanoTime()} by which holders must have released
	 */
	void shutdown(long deadline);

	/**
	 * What a strategy's shutdown leaves its holders: how long they may still work.
	 * @param deadline the deadline
	 * @return what is left of it now, never negative
	 */
	static Duration left(long deadline) {
		return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
	}

}
