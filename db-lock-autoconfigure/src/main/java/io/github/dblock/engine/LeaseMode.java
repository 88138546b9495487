package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.dblock.DbLockException;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * The lease lock, the default: a row with an expiry in database time, taken with a fresh
 * owner id per acquisition, released by a delete that checks owner and token. Releases
 * that happen at the same moment share one statement and one commit
 * ({@link GroupRelease}).
 */
final class LeaseMode implements LockMode {

	/**
	 * Release statements one engine runs at once; the releases that come meanwhile share the
	 * next one. With one, a release that came while another's statement ran waited for it
	 * (at 4 threads nearly every release parked); with two, they run side by side, as the raw
	 * lock's do, and under more threads still share statements.
	 */
	private static final int RELEASE_STATEMENTS = 2;

	private final LockRepository repository;

	private final OwnerIds ownerIds = new OwnerIds();

	private final GroupRelease releases;

	private final Orphans orphans;

	LeaseMode(LockRepository repository, LockScheduler scheduler) {
		this.repository = repository;
		this.releases = new GroupRelease(repository, RELEASE_STATEMENTS);
		this.orphans = new Orphans("rows", repository::abandonAll, scheduler);
	}

	@Override
	public void close() {
		this.orphans.close();
	}

	/**
	 * One attempt to take a key, with a fresh owner id; an attempt whose statement was sent
	 * and failed is cleaned up by its owner id ({@link Orphans}).
	 * @param request what is asked
	 * @return the lease, or {@code null} if another owner holds the key
	 * @throws DbLockException if the database failed
	 */
	@Nullable Lease acquire(LockRequest request) {
		String owner = this.ownerIds.next();
		try {
			return this.repository.tryAcquire(request.key(), owner, request.lease()).orElse(null);
		}
		catch (DataAccessException ex) {
			if (!(ex instanceof CannotGetJdbcConnectionException)) {
				// the statement was sent: the database may have committed it
				this.orphans.abandon(request.key(), owner, request.lease());
			}
			throw new DbLockException("Could not acquire lock '" + request.key() + "': the database failed ("
					+ ex.getMessage() + ")", ex);
		}
	}

	@Override
	public Optional<Instant> extend(Lease lease, Duration duration, boolean newHolder) {
		return this.repository.renew(lease, duration, newHolder);
	}

	@Override
	public List<Optional<Instant>> extendAll(List<Lease> leases, Duration duration, boolean newHolder) {
		return this.repository.renewAll(leases, duration, newHolder);
	}

	@Override
	public boolean release(Lease lease, Duration minimumHold) {
		return minimumHold.isZero() ? this.releases.release(lease) : this.repository.release(lease, minimumHold);
	}

	@Override
	public boolean cede(Lease lease, Duration wantedWithin) {
		return this.repository.cede(lease, wantedWithin);
	}

}
