package io.github.dblock.engine;

import java.time.Duration;

import io.github.dblock.jdbc.Lease;

/**
 * What a leased mode does to its rows once it holds them, under the engine's shared parts:
 * renewal ({@link Renewer}, for the {@link LeaseWatchdog}), release and cede (for the
 * {@link ReleasePath} and the {@link LocalTurn}). Every method returns once the database
 * has answered; a release or a cede is committed when it returns.
 */
interface LockMode extends Renewer, AutoCloseable {

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
