package io.github.dblock.core;

import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Renews held, renewed leases: one thread whose periodic sweep renews every lease that is
 * due. A renewal that fails is tried again at the next sweep; a lease whose row is gone or
 * another owner's, or that could not be renewed before its local deadline, is marked lost
 * at once.
 */
final class LeaseWatchdog implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LeaseWatchdog.class);

	private static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final LockMode mode;

	private final ScheduledThreadPoolExecutor executor;

	private final Set<HeldLease> renewing = ConcurrentHashMap.newKeySet();

	private volatile long tick = Long.MAX_VALUE;

	private @Nullable ScheduledFuture<?> sweeper;

	LeaseWatchdog(LockMode mode) {
		this.mode = mode;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("db-lock-watchdog-");
		threads.setDaemon(true);
		this.executor = new ScheduledThreadPoolExecutor(1, threads);
		this.executor.setRemoveOnCancelPolicy(true);
	}

	/** Renews a lease every {@code periodNanos} from now on. */
	void watch(HeldLease lease, long periodNanos) {
		lease.renewalPeriod = periodNanos;
		lease.nextRenewal = System.nanoTime() + periodNanos;
		this.renewing.add(lease);
		// sweep often enough that no lease waits more than a quarter period past its renewal
		long wanted = Math.max(periodNanos / 4, MIN_TICK_NANOS);
		if (wanted < this.tick) {
			synchronized (this) {
				if (wanted < this.tick && !this.executor.isShutdown()) {
					ScheduledFuture<?> previous = this.sweeper;
					if (previous != null) {
						previous.cancel(false);
					}
					this.tick = wanted;
					this.sweeper = this.executor.scheduleWithFixedDelay(this::sweep, wanted, wanted, TimeUnit.NANOSECONDS);
				}
			}
		}
	}

	/** Stops renewing a lease. */
	void unwatch(HeldLease lease) {
		this.renewing.remove(lease);
	}

	private void sweep() {
		for (HeldLease lease : this.renewing) {
			try {
				if (lease.ended || lease.lostAt != null || !lease.renewed) {
					this.renewing.remove(lease);
				}
				else if (System.nanoTime() - lease.nextRenewal >= 0) {
					renew(lease);
				}
			}
			catch (RuntimeException ex) {
				logger.error("Watchdog failed on lock '" + lease.lease.key() + "'", ex);
			}
		}
	}

	private void renew(HeldLease lease) {
		lease.io.lock();
		try {
			if (lease.ended || !lease.renewed) {
				return;
			}
			if (lease.remainingNanos() <= 0) {
				lease.lost("it was not renewed before its lease ended on the local clock");
				return;
			}
			long sentAt = System.nanoTime();
			try {
				Optional<Instant> renewed = this.mode.extend(lease.current(), lease.duration);
				if (renewed.isPresent()) {
					lease.extended(renewed.get(), lease.duration, sentAt);
					lease.nextRenewal = sentAt + lease.renewalPeriod;
				}
				else {
					lease.lost("its row was taken over by another owner or deleted");
				}
			}
			catch (RuntimeException ex) {
				// tried again at the next sweep, not a whole period later
				if (lease.remainingNanos() <= 0) {
					lease.lost("the database could not be reached to renew it before it ended (" + ex.getMessage() + ")");
				}
				else {
					logger.warn("Could not renew lock '" + lease.lease.key() + "'; trying again before its lease ends at "
							+ lease.expiresAt, ex);
				}
			}
		}
		finally {
			lease.io.unlock();
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
