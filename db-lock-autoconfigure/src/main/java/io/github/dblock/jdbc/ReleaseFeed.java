package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.List;

/**
 * The keys whose lease rows were deleted (released, ceded, given up) while another owner's
 * refused attempt had marked them as wanted, told by the database when the deleting
 * transaction commits: on PostgreSQL, a trigger of the lock table's
 * ({@code <table>_wake_waiters}, migration V11) notifies the channel named after the table,
 * and the feed listens on a connection of its own. A waiter told of its key asks the
 * database again at once instead of at the end of its back-off.
 * <p>
 * A key told is a hint and never the ground for a decision: the waiter's next attempt
 * decides, as it would after its back-off. A notification lost (the feed's connection
 * broke, it was not yet listening) costs the rest of the waiter's back-off, no more; a key
 * told that another owner took meanwhile costs one refused attempt. Used by one thread at
 * a time.
 *
 * @since 0.1.0
 * @see LockRepository#releaseFeed()
 */
public interface ReleaseFeed extends AutoCloseable {

	/**
	 * Waits for keys released while wanted. The first call, and the first after a failure
	 * or {@link #close()}, takes a connection of the lock statements' data source and
	 * listens on it (releases that committed before miss it); the connection stays taken
	 * until {@link #close()}.
	 * @param timeout the longest to wait when no key is told
	 * @return the keys told since the previous call, possibly none, in the order of their
	 * commits
	 * @throws org.springframework.dao.DataAccessException if the database failed: the
	 * connection was given back, and the next call takes one again
	 * @throws UnsupportedOperationException if the data source's connections cannot listen
	 * (a driver other than pgjdbc): no later call can either
	 */
	List<String> await(Duration timeout);

	/**
	 * Stops listening and gives the connection back to its data source, if it has one; the
	 * next {@link #await} takes one again.
	 */
	@Override
	void close();

}
