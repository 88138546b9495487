package io.github.dblock.leader;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.leader.LeadershipRevokedEvent.Reason;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * This instance's candidacy for one role: it tries to take the role's lease every poll
 * interval while it does not lead, and leads while the lease has more than a quarter of its
 * length left on the local clock (the watchdog renews it). Every change of leadership is
 * made under one lock, so that a granted event, the start of the role's beans, the revoked
 * event and their stop follow each other in that order.
 */
final class Candidacy {

	private static final Log logger = LogFactory.getLog(Candidacy.class);

	private final String role;

	private final LockRequest request;

	private final LockEngine engine;

	private final ApplicationEventPublisher publisher;

	private final Object source;

	/** The role's beans, in the order they start (by phase). */
	private volatile List<SmartLifecycle> beans = List.of();

	/** Leads while more than this is left of the lease on the local clock. */
	private final Duration margin;

	/** How long it stays out after a yield, so that another candidate takes the role. */
	private final long holdBackNanos;

	private final ReentrantLock changes = new ReentrantLock();

	private final AtomicBoolean revoking = new AtomicBoolean();

	private volatile @Nullable LockHandle handle;

	private volatile long term;

	private volatile @Nullable Instant since;

	private volatile boolean active;

	private volatile long heldBackUntil = System.nanoTime();

	Candidacy(String role, String storedKey, Duration lease, Duration pollInterval, LockEngine engine,
			ApplicationEventPublisher publisher, Object source) {
		this.role = role;
		this.request = new LockRequest(storedKey, Duration.ZERO, lease, true, Duration.ZERO, DbLockMode.LEASE);
		this.engine = engine;
		this.publisher = publisher;
		this.source = source;
		this.margin = lease.dividedBy(4);
		this.holdBackNanos = pollInterval.multipliedBy(2).toNanos();
	}

	String role() {
		return this.role;
	}

	String storedKey() {
		return this.request.key();
	}

	/** Whether this instance leads: its lease has more than the margin left on the local clock. */
	boolean isLeader() {
		LockHandle current = this.handle;
		return current != null && current.remaining().compareTo(this.margin) > 0;
	}

	OptionalLong term() {
		return isLeader() ? OptionalLong.of(this.term) : OptionalLong.empty();
	}

	Optional<Instant> since() {
		Instant at = this.since;
		return (at != null && isLeader()) ? Optional.of(at) : Optional.empty();
	}

	boolean isActive() {
		return this.active;
	}

	/** Starts the candidacy, with the role's beans in the order they start. */
	void activate(List<SmartLifecycle> beans) {
		this.beans = List.copyOf(beans);
		this.revoking.set(false);
		this.active = true;
	}

	/**
	 * One attempt to take the role, unless it leads, is held back after a yield, or is not
	 * active. Runs on a worker of the engine's scheduler: it may wait for the database.
	 */
	void attempt() {
		if (!this.active || this.handle != null || System.nanoTime() - this.heldBackUntil < 0) {
			return;
		}
		Optional<LockHandle> taken;
		try {
			taken = this.engine.tryAcquire(this.request);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not try to take the leadership of role '" + this.role + "'", ex);
			return;
		}
		if (taken.isEmpty()) {
			return;
		}
		LockHandle acquired = taken.get();
		this.changes.lock();
		try {
			if (!this.active || acquired.remaining().compareTo(this.margin) <= 0) {
				// stopped meanwhile, or an attempt that took so long that its lease is nearly over
				close(acquired);
				return;
			}
			grant(acquired);
		}
		finally {
			this.changes.unlock();
		}
	}

	/**
	 * Whether the leadership is to be revoked now: held, but no more than the margin left.
	 * Never waits: runs on the scheduler's timer.
	 */
	boolean due() {
		LockHandle current = this.handle;
		return current != null && current.remaining().compareTo(this.margin) <= 0
				&& this.revoking.compareAndSet(false, true);
	}

	/** Revokes a leadership whose lease ran low ({@link #due()}). */
	void revokeLost() {
		try {
			LockHandle current = this.handle;
			if (current != null && current.remaining().compareTo(this.margin) <= 0) {
				revoke(Reason.LOST);
			}
		}
		finally {
			this.revoking.set(false);
		}
	}

	/** Steps down, and stays out for two poll intervals so that another candidate takes the role. */
	void yieldLeadership() {
		this.changes.lock();
		try {
			if (this.handle != null) {
				this.heldBackUntil = System.nanoTime() + this.holdBackNanos;
				revoke(Reason.YIELDED);
			}
		}
		finally {
			this.changes.unlock();
		}
	}

	/** Ends the candidacy: no more attempts; a leadership is revoked and its lease released. */
	void deactivate() {
		this.changes.lock();
		try {
			this.active = false;
			revoke(Reason.STOPPED);
		}
		finally {
			this.changes.unlock();
		}
	}

	private void grant(LockHandle acquired) {
		this.term = acquired.fencingToken();
		this.since = Instant.now();
		this.handle = acquired;
		logger.info("Leadership of role '" + this.role + "' granted to this instance, term " + this.term);
		this.publisher.publishEvent(new LeadershipGrantedEvent(this.source, this.role, this.term));
		for (SmartLifecycle bean : this.beans) {
			if (!bean.isRunning()) {
				try {
					bean.start();
				}
				catch (RuntimeException ex) {
					logger.error("A bean of role '" + this.role + "' failed to start on leadership", ex);
				}
			}
		}
	}

	private void revoke(Reason reason) {
		this.changes.lock();
		try {
			LockHandle current = this.handle;
			if (current == null) {
				return;
			}
			this.handle = null;
			this.since = null;
			logger.info("Leadership of role '" + this.role + "' revoked on this instance (" + reason + "), term "
					+ this.term);
			try {
				this.publisher.publishEvent(new LeadershipRevokedEvent(this.source, this.role, this.term, reason));
			}
			finally {
				for (int i = this.beans.size() - 1; i >= 0; i--) {
					SmartLifecycle bean = this.beans.get(i);
					if (bean.isRunning()) {
						try {
							bean.stop();
						}
						catch (RuntimeException ex) {
							logger.error("A bean of role '" + this.role + "' failed to stop on revocation", ex);
						}
					}
				}
				close(current);
			}
		}
		finally {
			this.changes.unlock();
		}
	}

	private void close(LockHandle lease) {
		try {
			lease.close();
		}
		catch (RuntimeException ex) {
			logger.warn("The lease of role '" + this.role + "' could not be released; it ends by its time", ex);
		}
	}

}
