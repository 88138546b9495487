package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.locks.ReentrantLock;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.Lease;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A lease this JVM took from the database, held by one local {@link Hold} after another
 * while the key passes between local threads. This JVM knows the lease has not ended only
 * until its local deadline (the time the statement that took or last extended it was sent,
 * plus the lease); after that it is not held, whatever the database says.
 */
final class HeldLease {

	private static final Log logger = LogFactory.getLog(HeldLease.class);

	/** Bits of a fencing token that count local hand-offs of one database lease. */
	static final int HANDOFF_BITS = 16;

	private static final int MAX_HANDOFFS = (1 << HANDOFF_BITS) - 1;

	final LocalKey local;

	final Lease lease;

	/** The mode it was taken in, for the report of a loss. */
	final DbLockMode mode;

	/** Serializes the statements about this lease: renewal, extension, cede, release. */
	final ReentrantLock io = new ReentrantLock();

	volatile Duration duration;

	/** Whether the watchdog renews it. */
	volatile boolean renewed;

	volatile Instant expiresAt;

	/** The {@link System#nanoTime()} before which the lease cannot have ended. */
	volatile long localDeadline;

	/** Found lost: taken over, deleted, or not renewed in time. */
	volatile @Nullable Instant lostAt;

	/** Released, ceded or given up by this JVM: no statement about it is sent any more. */
	volatile boolean ended;

	/** The local holder now, to which a loss is reported. */
	volatile @Nullable Hold holder;

	/** Local holders after the first; changed only by the thread that passed the gate. */
	volatile int handoffs;

	/**
	 * The hand-off whose holder's start the database's {@code acquired_at} records: it lags
	 * {@link #handoffs} after a hand-on without a statement, until the next renewal writes it.
	 */
	volatile int startWritten;

	/** When the current local turn began: the lease was taken, or the last turn checked. */
	volatile long turnStart;

	/** Watchdog state: how often, and when next, to renew. */
	volatile long renewalPeriod;

	volatile long nextRenewal;

	/** Whether its last renewal together with others failed: it is renewed alone. */
	volatile boolean renewAlone;

	/** Told of a loss. */
	private final Events events;

	HeldLease(LocalKey local, Lease lease, LockRequest request, long sentAt, Events events) {
		this.local = local;
		this.events = events;
		this.lease = lease;
		this.mode = request.mode();
		this.duration = request.lease();
		this.renewed = request.renewed();
		this.expiresAt = lease.expiresAt();
		this.localDeadline = sentAt + request.lease().toNanos();
		this.turnStart = sentAt;
		// the fencing token of its first holder: threads of this JVM it is handed on to get the next ones
		events.holdStarted(lease.key(), this.mode, lease.owner(), lease.token() << HANDOFF_BITS);
	}

	/**
	 * Whether this JVM knows that the lease has not ended: not found lost, not ended, and
	 * within its time on the local clock.
	 */
	boolean isValid() {
		return this.lostAt == null && !this.ended && System.nanoTime() - this.localDeadline < 0;
	}

	/** Whether it may pass to one more local holder. */
	boolean canHandOn() {
		return isValid() && this.handoffs < MAX_HANDOFFS;
	}

	/**
	 * Whether it was handed on to another local holder since its start was last written:
	 * its next renewal writes the database's now as its start too.
	 */
	boolean startBehind() {
		return this.handoffs != this.startWritten;
	}

	/** How long it lasts yet on the local clock, in nanoseconds (negative once past). */
	long remainingNanos() {
		return this.localDeadline - System.nanoTime();
	}

	/** The lease with its current end. */
	Lease current() {
		return new Lease(this.lease.key(), this.lease.owner(), this.lease.token(), this.expiresAt);
	}

	/** Records an extension sent at {@code sentAt}. */
	void extended(Instant expiresAt, Duration duration, long sentAt) {
		this.expiresAt = expiresAt;
		this.duration = duration;
		this.localDeadline = sentAt + duration.toNanos();
	}

	/**
	 * Marks the lease lost, once, unless this JVM ended it: reports it to its holder and
	 * logs it at ERROR.
	 * @param reason why, for the log
	 */
	void lost(String reason) {
		Instant now = Instant.now();
		synchronized (this) {
			if (this.lostAt != null || this.ended) {
				return;
			}
			this.lostAt = now;
		}
		Hold holder = this.holder;
		if (holder != null) {
			holder.lost(now);
		}
		this.events.lost(this.lease.key(), this.mode);
		this.events.holdEnded(this.lease.key(), this.mode, this.lease.owner(), true);
		logger.error("Lost lock '" + this.lease.key() + "' (owner " + this.lease.owner() + ", token "
				+ this.lease.token() + ") at " + now + ": " + reason + "; another owner may hold it now");
	}

	/** The wall-clock instant of the local deadline. */
	Instant deadlineInstant() {
		return Instant.now().plusNanos(remainingNanos());
	}

	@Override
	public String toString() {
		return this.lease.toString();
	}

}
