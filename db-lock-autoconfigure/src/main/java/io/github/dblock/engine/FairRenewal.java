package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.FairLockRepository.Ticket;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The fair mode's work on the engine's {@link LockScheduler}:
 * <ul>
 * <li>renews the tickets of this JVM whose lease is renewed (waiting, or held with a
 * renewed lease): every tick, one statement per lease length for the tickets that are due
 * and those due within half a period, so that their renewals fall in step (up to
 * {@link #MAX_BATCH} a statement); a renewal that fails is tried again at the next tick; a
 * ticket found gone is marked lost;</li>
 * <li>every tick, on the scheduler's timer (which never waits for the database), marks lost
 * every ticket whose local deadline passed, so that a renewal stuck on the database never
 * delays the report, as the {@link LeaseWatchdog} does for leases.</li>
 * </ul>
 * The expired tickets of waiters and holders that died are deleted by the reaper, with the
 * other tables' expired rows.
 */
final class FairRenewal implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(FairRenewal.class);

	/** The most tickets renewed by one statement. */
	static final int MAX_BATCH = 128;

	private static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final FairLockRepository queue;

	/** Tickets whose lease is renewed. */
	private final Set<FairTicket> renewing = ConcurrentHashMap.newKeySet();

	private final LockScheduler.Tasks executor;

	private volatile long tick = Long.MAX_VALUE;

	private @Nullable ScheduledFuture<?> renewal;

	private @Nullable ScheduledFuture<?> checker;

	FairRenewal(FairLockRepository queue, LockScheduler scheduler) {
		this.queue = queue;
		this.executor = scheduler.tasks("fair");
	}

	/** Renews a ticket every {@link FairTicket#renewalPeriod} from now on. */
	void watch(FairTicket ticket) {
		long period = ticket.renewalPeriod;
		ticket.nextRenewal = System.nanoTime() + period;
		this.renewing.add(ticket);
		// often enough that no ticket waits more than a quarter period past its renewal
		long wanted = Math.max(period / 4, MIN_TICK_NANOS);
		if (wanted < this.tick) {
			synchronized (this) {
				if (wanted < this.tick && !this.executor.isShutdown()) {
					if (this.renewal != null) {
						this.renewal.cancel(false);
					}
					if (this.checker != null) {
						this.checker.cancel(false);
					}
					this.tick = wanted;
					this.renewal = this.executor.scheduleWithFixedDelay(() -> never(this::renewDue), wanted, wanted,
							TimeUnit.NANOSECONDS);
					this.checker = this.executor.scheduleNonBlockingWithFixedDelay(() -> never(this::markEnded), wanted,
							wanted, TimeUnit.NANOSECONDS);
				}
			}
		}
	}

	/** Stops renewing a ticket. */
	void unwatch(FairTicket ticket) {
		this.renewing.remove(ticket);
	}

	/** Whether a ticket is renewed. */
	boolean isWatched(FairTicket ticket) {
		return this.renewing.contains(ticket);
	}

	/** Runs a periodic task so that no failure of it ends the schedule (as it would, silently). */
	private static void never(Runnable task) {
		try {
			task.run();
		}
		catch (Throwable ex) {
			logger.error("The fair lock's renewal failed; it goes on at its next tick", ex);
		}
	}

	private void markEnded() {
		for (FairTicket ticket : this.renewing) {
			if (!ticket.ended && ticket.lostAt == null && ticket.remainingNanos() <= 0) {
				ticket.lost("it was not renewed before its lease ended on the local clock", false);
			}
		}
	}

	private void renewDue() {
		Map<Duration, List<FairTicket>> soon = new HashMap<>();
		Set<Duration> due = new HashSet<>();
		long now = System.nanoTime();
		for (FairTicket ticket : this.renewing) {
			if (ticket.ended || ticket.lostAt != null) {
				this.renewing.remove(ticket);
			}
			else if (ticket.remainingNanos() <= 0) {
				ticket.lost("it was not renewed before its lease ended on the local clock", false);
			}
			else if (now - (ticket.nextRenewal - ticket.renewalPeriod / 2) >= 0) {
				soon.computeIfAbsent(ticket.duration, (duration) -> new ArrayList<>()).add(ticket);
				if (now - ticket.nextRenewal >= 0) {
					due.add(ticket.duration);
				}
			}
		}
		soon.forEach((duration, tickets) -> {
			if (due.contains(duration)) {
				for (int from = 0; from < tickets.size(); from += MAX_BATCH) {
					renew(duration, tickets.subList(from, Math.min(from + MAX_BATCH, tickets.size())));
				}
			}
		});
	}

	private void renew(Duration duration, List<FairTicket> tickets) {
		List<Ticket> numbers = new ArrayList<>(tickets.size());
		long[] extensions = new long[tickets.size()];
		for (int i = 0; i < tickets.size(); i++) {
			numbers.add(tickets.get(i).ticket);
			extensions[i] = tickets.get(i).extensions();
		}
		long sentAt = System.nanoTime();
		List<Boolean> renewed;
		try {
			renewed = this.queue.renewAll(numbers, duration);
		}
		catch (RuntimeException ex) {
			// tried again at the next tick: they are still due
			logger.warn("Could not renew " + tickets.size() + " fair lock tickets; trying again", ex);
			return;
		}
		for (int i = 0; i < tickets.size(); i++) {
			FairTicket ticket = tickets.get(i);
			if (ticket.ended) {
				continue;
			}
			if (!renewed.get(i)) {
				ticket.lost("its ticket was gone, or its lease had ended, when it was renewed", false);
			}
			else if (ticket.remainingNanos() <= 0) {
				ticket.lost("its renewal came back only after its lease had ended on the local clock", false);
			}
			else {
				ticket.extended(extensions[i], sentAt, duration);
				ticket.nextRenewal = sentAt + ticket.renewalPeriod;
			}
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
