package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.dblock.jdbc.Lease;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Renews held, renewed leases, and finds the ones that ended, on the engine's {@link LockScheduler}:
 * <ul>
 * <li>a periodic sweep renews every lease that is due, those of one length together in one
 * statement (up to {@link #MAX_BATCH}); if that statement fails, each of its leases is tried
 * alone, and is renewed alone, after the others, until that succeeds, so that one row
 * another session has locked delays the others once, by one statement time limit. A
 * renewal that fails is tried again at the next sweep; a lease whose row is gone or another
 * owner's, or whose renewal came back after its local deadline, is marked lost;</li>
 * <li>a periodic check marks lost every lease whose local deadline has passed, from the
 * local clock alone, so that a renewal stuck on the database never delays the report.</li>
 * </ul>
 * A lease handed on to another local holder without a statement
 * ({@link HeldLease#startBehind()}) is renewed with those like it, by a statement that also
 * writes the database's now as its start, once per hand-on: the recovery job's limit
 * ({@code db-lock.recovery.max-hold}) then measures its current holder, from at most one
 * renewal after that holder began.
 */
final class LeaseWatchdog implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LeaseWatchdog.class);

	/** The most leases renewed by one statement. */
	static final int MAX_BATCH = 128;

	private static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	/** The lease that ends first, first. */
	private static final Comparator<HeldLease> BY_REMAINING = Comparator.comparingLong(HeldLease::remainingNanos);

	private final Renewer mode;

	private final LockScheduler.Tasks executor;

	private final Set<HeldLease> renewing = ConcurrentHashMap.newKeySet();

	private volatile long tick = Long.MAX_VALUE;

	private @Nullable ScheduledFuture<?> sweeper;

	private @Nullable ScheduledFuture<?> checker;

	LeaseWatchdog(Renewer mode, LockScheduler scheduler) {
		this.mode = mode;
		// renewals run on a worker, the check for ended leases on the timer: it never waits for the database
		this.executor = scheduler.tasks("watchdog");
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
					cancel(this.sweeper);
					cancel(this.checker);
					this.tick = wanted;
					this.sweeper = this.executor.scheduleWithFixedDelay(() -> never(this::sweep), wanted, wanted,
							TimeUnit.NANOSECONDS);
					this.checker = this.executor.scheduleNonBlockingWithFixedDelay(() -> never(this::markEnded), wanted, wanted,
							TimeUnit.NANOSECONDS);
				}
			}
		}
	}

	/** Runs a periodic task so that no failure of it ends the schedule (as it would, silently). */
	private static void never(Runnable task) {
		try {
			task.run();
		}
		catch (Throwable ex) {
			logger.error("The lock watchdog failed; it goes on at its next tick", ex);
		}
	}

	private static void cancel(@Nullable ScheduledFuture<?> task) {
		if (task != null) {
			task.cancel(false);
		}
	}

	/**
	 * How far behind its schedule the watchdog is now: the longest time a lease it renews
	 * has waited past its renewal time, zero if none is due.
	 */
	Duration lag() {
		long now = System.nanoTime();
		long lag = 0;
		for (HeldLease lease : this.renewing) {
			if (!lease.ended && lease.lostAt == null && lease.renewed) {
				lag = Math.max(lag, now - lease.nextRenewal);
			}
		}
		return Duration.ofNanos(lag);
	}

	/** Stops renewing a lease. */
	void unwatch(HeldLease lease) {
		this.renewing.remove(lease);
	}

	private void markEnded() {
		for (HeldLease lease : this.renewing) {
			if (!lease.ended && lease.lostAt == null && lease.remainingNanos() <= 0) {
				lease.lost("it was not renewed before its lease ended on the local clock");
			}
		}
	}

	private void sweep() {
		Map<Batch, List<HeldLease>> due = new HashMap<>();
		List<HeldLease> alone = new ArrayList<>();
		long now = System.nanoTime();
		for (HeldLease lease : this.renewing) {
			if (lease.ended || lease.lostAt != null || !lease.renewed) {
				this.renewing.remove(lease);
			}
			else if (now - lease.nextRenewal >= 0) {
				if (lease.renewAlone) {
					alone.add(lease);
				}
				else {
					due.computeIfAbsent(new Batch(lease.duration, lease.startBehind()), (batch) -> new ArrayList<>())
						.add(lease);
				}
			}
		}
		due.forEach((batch, leases) -> {
			for (int from = 0; from < leases.size(); from += MAX_BATCH) {
				renew(batch, leases.subList(from, Math.min(from + MAX_BATCH, leases.size())));
			}
		});
		// those whose last renewal together failed: after the others, so that they delay no one
		alone.sort(BY_REMAINING);
		for (HeldLease lease : alone) {
			renew(new Batch(lease.duration, lease.startBehind()), List.of(lease));
		}
	}

	/** Renews leases of one length and kind together; alone if that fails. */
	private void renew(Batch kind, List<HeldLease> due) {
		Duration duration = kind.duration();
		List<HeldLease> locked = new ArrayList<>(due.size());
		try {
			for (HeldLease lease : due) {
				// one busy with a statement of its own (release, extension) is left to the next sweep
				if (lease.io.tryLock()) {
					locked.add(lease);
				}
			}
			List<HeldLease> batch = new ArrayList<>(locked.size());
			List<Lease> current = new ArrayList<>(locked.size());
			// read before the statement is sent: the holders whose start it writes
			int[] handoffs = new int[locked.size()];
			for (HeldLease lease : locked) {
				if (renewable(lease, duration)) {
					handoffs[batch.size()] = lease.handoffs;
					batch.add(lease);
					current.add(lease.current());
				}
			}
			if (batch.size() == 1) {
				renewAlone(batch.get(0));
			}
			else if (!batch.isEmpty()) {
				long sentAt = System.nanoTime();
				List<Optional<Instant>> renewed;
				try {
					renewed = this.mode.extendAll(current, duration, kind.newHolder());
				}
				catch (RuntimeException ex) {
					logger.warn("Could not renew " + batch.size() + " locks together; renewing each alone", ex);
					batch.sort(BY_REMAINING);
					for (HeldLease lease : batch) {
						lease.renewAlone = true;
						renewAlone(lease);
					}
					return;
				}
				for (int i = 0; i < batch.size(); i++) {
					renewed(batch.get(i), renewed.get(i), sentAt, kind.newHolder(), handoffs[i]);
				}
			}
		}
		catch (RuntimeException ex) {
			logger.error("Watchdog failed renewing " + due, ex);
		}
		finally {
			locked.forEach((lease) -> lease.io.unlock());
		}
	}

	/** Whether a lease is to be renewed now; one past its local deadline is marked lost. */
	private static boolean renewable(HeldLease lease, Duration duration) {
		if (lease.ended || !lease.renewed || lease.lostAt != null || !lease.duration.equals(duration)) {
			return false;
		}
		if (lease.remainingNanos() <= 0) {
			lease.lost("it was not renewed before its lease ended on the local clock");
			return false;
		}
		return true;
	}

	/** Renews one lease, with its io lock held. */
	private void renewAlone(HeldLease lease) {
		if (lease.ended || lease.lostAt != null) {
			return;
		}
		int handoffs = lease.handoffs;
		boolean newHolder = handoffs != lease.startWritten;
		long sentAt = System.nanoTime();
		try {
			renewed(lease, this.mode.extend(lease.current(), lease.duration, newHolder), sentAt, newHolder, handoffs);
			lease.renewAlone = false;
		}
		catch (RuntimeException ex) {
			// tried again at the next sweep, not a whole period later, and after the others
			lease.renewAlone = true;
			if (lease.remainingNanos() <= 0) {
				lease.lost("the database could not be reached to renew it before it ended (" + ex.getMessage() + ")");
			}
			else {
				logger.warn("Could not renew lock '" + lease.lease.key() + "'; trying again before its lease ends at "
						+ lease.deadlineInstant(), ex);
			}
		}
	}

	/**
	 * Records a renewal's outcome; one that wrote the start ({@code newHolder}) records the
	 * hand-off read before it was sent.
	 */
	private static void renewed(HeldLease lease, Optional<Instant> renewed, long sentAt, boolean newHolder,
			int handoffs) {
		if (lease.ended) {
			return;
		}
		if (renewed.isEmpty()) {
			lease.lost("its row was taken over by another owner or deleted");
		}
		else if (lease.remainingNanos() <= 0) {
			// this JVM already counted it as ended: it does not come back to life
			lease.lost("its renewal came back only after its lease had ended on the local clock");
		}
		else {
			lease.extended(renewed.get(), lease.duration, sentAt);
			lease.nextRenewal = sentAt + lease.renewalPeriod;
			if (newHolder) {
				lease.startWritten = handoffs;
			}
		}
	}

	/**
	 * Leases renewed by one statement: of one length, and all handed on since their start
	 * was written, or none.
	 */
	private record Batch(Duration duration, boolean newHolder) {
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
