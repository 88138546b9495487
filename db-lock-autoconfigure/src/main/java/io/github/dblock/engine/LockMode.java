package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.dblock.jdbc.Lease;
import org.jspecify.annotations.Nullable;

/**
 * What one kind of lock does in the database, under the engine that does not care about
 * the kind (reentrancy, the local gate, waiting, the watchdog, handles), the way a
 * {@code PlatformTransactionManager} sits under Spring's transaction aspect. Every method
 * returns once the database has answered; a release or a cede is committed when it
 * returns.
 */
interface LockMode extends AutoCloseable {

	/**
	 * One attempt to take a key.
	 * @param request what is asked
	 * @return the lease, or {@code null} if another owner holds the key
	 * @throws io.github.dblock.DbLockException if the database failed
	 */
	@Nullable Lease acquire(LockRequest request);

	/**
	 * Extends a lease that this owner still holds to {@code duration} from the database's
	 * now.
	 * @param lease the lease
	 * @param duration the new lease from now
	 * @param newHolder whether it passed to another local holder since its start was last
	 * written: its start is set to the database's now too
	 * @return its new end, or empty if it is no longer this owner's
	 */
	Optional<Instant> extend(Lease lease, Duration duration, boolean newHolder);

	/**
	 * Extends leases that their owners still hold to {@code duration} from the database's
	 * now, in as few statements as the database allows.
	 * @param leases the leases
	 * @param duration the new lease from now
	 * @param newHolder whether they passed to other local holders since their start was
	 * last written: their start is set to the database's now too
	 * @return for each lease, in order, its new end, or empty if it is no longer its owner's
	 */
	List<Optional<Instant>> extendAll(List<Lease> leases, Duration duration, boolean newHolder);

	/**
	 * Ends a lease, or, while {@code minimumHold} since its acquisition has not passed,
	 * lets it end when it has.
	 * @param lease the lease
	 * @param minimumHold the minimum hold; zero for none
	 * @return whether the lease was still this owner's
	 */
	boolean release(Lease lease, Duration minimumHold);

	/**
	 * Ends a lease if another owner asked for its key less than {@code wantedWithin} ago.
	 * @param lease the lease
	 * @param wantedWithin how recent the other owner's attempt must be
	 * @return whether the lease was ended
	 */
	boolean cede(Lease lease, Duration wantedWithin);

	/** Stops what the mode runs on threads of its own. */
	@Override
	default void close() {
	}

}
