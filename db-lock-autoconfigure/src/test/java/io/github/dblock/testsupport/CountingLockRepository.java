package io.github.dblock.testsupport;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.ReleaseFeed;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;

/**
 * A real repository that counts the calls reaching it (each one SQL against the
 * database) and the most that were ever in flight at once, and that can lose the reply of
 * a cede that committed (the cede's delete is sent and committed by the database, then the
 * caller gets a timeout, as when a commit stalls past the statement limit or a reply is
 * cut), or fail every release without sending it (as when the connection breaks before
 * the delete reaches the server), to inject those faults deterministically.
 */
public final class CountingLockRepository implements LockRepository {

	private final LockRepository delegate;

	private final AtomicInteger acquireCalls = new AtomicInteger();

	private final AtomicInteger releaseCalls = new AtomicInteger();

	private final AtomicInteger renewCalls = new AtomicInteger();

	private final AtomicInteger leasesReleased = new AtomicInteger();

	private final AtomicInteger leasesRenewed = new AtomicInteger();

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger maxInFlight = new AtomicInteger();

	private volatile boolean loseCededReplies;

	private final AtomicInteger lostCedeReplies = new AtomicInteger();

	private volatile boolean failReleases;

	private final AtomicInteger failedReleases = new AtomicInteger();

	public CountingLockRepository(LockRepository delegate) {
		this.delegate = delegate;
	}

	@Override
	public Optional<Lease> tryAcquire(String key, String owner, Duration lease) {
		this.acquireCalls.incrementAndGet();
		this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
		try {
			return this.delegate.tryAcquire(key, owner, lease);
		}
		finally {
			this.inFlight.decrementAndGet();
		}
	}

	@Override
	public boolean cede(Lease lease, Duration wantedWithin) {
		boolean ceded = this.delegate.cede(lease, wantedWithin);
		if (ceded && this.loseCededReplies) {
			this.lostCedeReplies.incrementAndGet();
			throw new QueryTimeoutException("Test fault: the cede of '" + lease.key() + "' committed, its reply was lost");
		}
		return ceded;
	}

	/** From now on, every cede that committed fails as if its reply had been lost. */
	public CountingLockRepository loseCededReplies() {
		this.loseCededReplies = true;
		return this;
	}

	/** The cedes that committed and whose reply was lost. */
	public int lostCedeReplies() {
		return this.lostCedeReplies.get();
	}

	/** From now on, every release fails before it reaches the database: the rows stay. */
	public CountingLockRepository failReleases() {
		this.failReleases = true;
		return this;
	}

	/** Releases again reach the database. */
	public CountingLockRepository healReleases() {
		this.failReleases = false;
		return this;
	}

	/** The releases failed by {@link #failReleases()}. */
	public int failedReleases() {
		return this.failedReleases.get();
	}

	private void failReleaseIfAsked(Object leases) {
		if (this.failReleases) {
			this.failedReleases.incrementAndGet();
			throw new DataAccessResourceFailureException("Test fault: the release of " + leases + " failed");
		}
	}

	@Override
	public boolean release(Lease lease, Duration minimumHold) {
		this.releaseCalls.incrementAndGet();
		this.leasesReleased.incrementAndGet();
		failReleaseIfAsked(lease);
		return this.delegate.release(lease, minimumHold);
	}

	@Override
	public int releaseAll(List<Lease> leases) {
		this.releaseCalls.incrementAndGet();
		this.leasesReleased.addAndGet(leases.size());
		failReleaseIfAsked(leases);
		return this.delegate.releaseAll(leases);
	}

	@Override
	public boolean abandon(String key, String owner) {
		return this.delegate.abandon(key, owner);
	}

	@Override
	public List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration) {
		return renewAll(leases, duration, false);
	}

	@Override
	public List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration, boolean newHolder) {
		this.renewCalls.incrementAndGet();
		this.leasesRenewed.addAndGet(leases.size());
		return this.delegate.renewAll(leases, duration, newHolder);
	}

	@Override
	public Optional<Instant> renew(Lease lease, Duration duration) {
		return renew(lease, duration, false);
	}

	@Override
	public Optional<Instant> renew(Lease lease, Duration duration, boolean newHolder) {
		this.renewCalls.incrementAndGet();
		this.leasesRenewed.incrementAndGet();
		return this.delegate.renew(lease, duration, newHolder);
	}

	@Override
	public int deleteExpired(int limit) {
		return this.delegate.deleteExpired(limit);
	}

	@Override
	public @Nullable String semaphoresUnavailable() {
		return this.delegate.semaphoresUnavailable();
	}

	@Override
	public int recordPermits(String key, int permits) {
		return this.delegate.recordPermits(key, permits);
	}

	@Override
	public int maxKeyLength() {
		return this.delegate.maxKeyLength();
	}

	public int acquireCalls() {
		return this.acquireCalls.get();
	}

	public int releaseCalls() {
		return this.releaseCalls.get();
	}

	/** Leases passed to {@link #release} and {@link #releaseAll}. */
	public int leasesReleased() {
		return this.leasesReleased.get();
	}

	/** The leases the renewals sent so far were for, together or alone. */
	public int leasesRenewed() {
		return this.leasesRenewed.get();
	}

	public int renewCalls() {
		return this.renewCalls.get();
	}

	public int maxInFlight() {
		return this.maxInFlight.get();
	}

	public void reset() {
		this.acquireCalls.set(0);
		this.releaseCalls.set(0);
		this.renewCalls.set(0);
		this.leasesReleased.set(0);
		this.maxInFlight.set(0);
	}

	@Override
	public Optional<ReleaseFeed> releaseFeed() {
		return this.delegate.releaseFeed();
	}

}
