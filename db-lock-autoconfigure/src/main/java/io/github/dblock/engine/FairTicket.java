package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.FairLockRepository.Enqueued;
import io.github.dblock.jdbc.FairLockRepository.Ticket;
import io.github.dblock.jdbc.HeldRow;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A ticket of this JVM: waiting, then held by its thread with a reentrant count, released
 * when the count comes back to zero, after the transaction if there is one
 * ({@link CountedHold}).
 */
final class FairTicket extends CountedHold {

	private static final Log logger = LogFactory.getLog(FairTicket.class);

	private final Events events;

	/** Releases the ticket once its count comes back to zero. */
	private final Consumer<FairTicket> release;

	final FairKey local;

	final Ticket ticket;

	final Thread thread = Thread.currentThread();

	final Duration duration;

	/** Whether its lease is renewed while it is held (else a fixed lease). */
	final boolean renewed;

	/** When it was enqueued, then when it was taken. */
	volatile long startedAt;

	/** The {@link System#nanoTime()} before which its lease cannot have ended. */
	volatile long localDeadline;

	/**
	 * Counts the extensions of its lease sent other than by its renewal, each counted before
	 * it is sent: a renewal sent before one does not set the local deadline once it returns
	 * (the later statement's lease stands). Guarded by this, with the writes of the deadline
	 * that depend on it.
	 */
	private long extensions;

	final long renewalPeriod;

	/**
	 * The head its enqueue saw ({@link FairLockRepository#enqueueAndLook}), for its first
	 * look only, or {@link Enqueued#NOT_LOOKED}; its thread's alone.
	 */
	long enqueueLook = Enqueued.NOT_LOOKED;

	volatile long nextRenewal;

	volatile @Nullable Instant lostAt;

	/** Given up or released: no statement about it is sent any more. */
	volatile boolean ended;

	volatile boolean done;

	/** Set once it holds the key: a loss is then its holder's (an ERROR), not a waiter's. */
	volatile boolean holding;

	/** Set once the end of its hold has been told ({@link Events#holdEnded}). */
	private final AtomicBoolean endTold = new AtomicBoolean();

	final AtomicBoolean released = new AtomicBoolean();

	FairTicket(FairKey local, Ticket ticket, LockRequest request, long sentAt, long renewalPeriod, Events events,
			Consumer<FairTicket> release) {
		this.local = local;
		this.events = events;
		this.release = release;
		this.renewalPeriod = renewalPeriod;
		this.ticket = ticket;
		this.duration = request.lease();
		this.renewed = request.renewed();
		this.startedAt = sentAt;
		this.localDeadline = sentAt + request.lease().toNanos();
	}

	/** Counts an extension about to be sent; the count, for {@link #extended}. */
	synchronized long extending() {
		return ++this.extensions;
	}

	/**
	 * Sets the local deadline from a statement sent at {@code sentAt} with this lease, unless
	 * another extension was sent after it (counted after {@code extensions}).
	 * @param extensions the count of extensions when the statement was sent
	 */
	synchronized void extended(long extensions, long sentAt, Duration lease) {
		if (this.extensions == extensions) {
			this.localDeadline = sentAt + lease.toNanos();
		}
	}

	/** The count of extensions sent so far, for a renewal about to be sent. */
	synchronized long extensions() {
		return this.extensions;
	}

	@Override
	public long remainingNanos() {
		return this.localDeadline - System.nanoTime();
	}

	boolean isValid() {
		return this.lostAt == null && !this.ended && remainingNanos() > 0;
	}

	/** Marks it lost, once, unless ended (or {@code evenIfEnded}): for a holder, an ERROR. */
	void lost(String why, boolean evenIfEnded) {
		Instant now = Instant.now();
		synchronized (this) {
			if (this.lostAt != null || (this.ended && !evenIfEnded)) {
				return;
			}
			this.lostAt = now;
		}
		if (this.holding) {
			logger.error("Lost fair lock '" + this.ticket.key() + "' (owner " + this.ticket.owner() + ", ticket "
					+ this.ticket.number() + ") at " + now + ": " + why + "; another owner may hold it now");
			this.events.lost(this.ticket.key(), DbLockMode.FAIR);
			holdEnded(true);
		}
		else {
			logger.warn("A waiter for fair lock '" + this.ticket.key() + "' (ticket " + this.ticket.number()
					+ ") dropped out of the queue: " + why + "; it enqueues again");
			LockSupport.unpark(this.thread);
		}
	}

	/** Marks a holder whose lease ended on the local clock before its release as lost then. */
	void endedBeforeRelease() {
		Instant end = expiresAt();
		synchronized (this) {
			if (this.lostAt != null || remainingNanos() > 0) {
				return;
			}
			this.lostAt = end;
		}
		this.events.lost(this.ticket.key(), DbLockMode.FAIR);
		holdEnded(true);
		logger.warn("Fair lock '" + this.ticket.key() + "' was released after its lease ended on the local clock (at "
				+ end + "): another owner may have held it meanwhile");
	}

	/** Tells the end of its hold, once. */
	void holdEnded(boolean lost) {
		if (this.endTold.compareAndSet(false, true)) {
			this.events.holdEnded(this.ticket.key(), DbLockMode.FAIR, this.ticket.owner(), lost);
		}
	}

	@Override
	public String key() {
		return this.ticket.key();
	}

	@Override
	public long token() {
		return this.ticket.number();
	}

	@Override
	public boolean isHeld() {
		return !this.done && isValid();
	}

	@Override
	public Instant expiresAt() {
		return Instant.now().plusNanos(remainingNanos());
	}

	/** The ticket's row, even once released: see {@link Hold#row()}. */
	@Override
	public HeldRow row() {
		return new HeldRow(HeldRow.Table.FAIR, this.ticket.key(), this.ticket.owner(), this.ticket.number());
	}

	@Override
	public Optional<Instant> lostSince() {
		Instant lost = this.lostAt;
		if (lost == null && !this.done && remainingNanos() <= 0) {
			lost = expiresAt();
		}
		return Optional.ofNullable(lost);
	}

	@Override
	protected void countedDown() {
		this.release.accept(this);
	}

}
