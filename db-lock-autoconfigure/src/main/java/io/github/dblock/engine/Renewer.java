package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.dblock.jdbc.Lease;

/**
 * Renews leases this owner still holds, for the {@link LeaseWatchdog}: what each leased
 * mode supplies to it. Every method returns once the database has answered.
 */
interface Renewer {

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

}
