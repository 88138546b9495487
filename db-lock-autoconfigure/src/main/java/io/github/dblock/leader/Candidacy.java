package io.github.dblock.leader;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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
import org.springframework.transaction.support.TransactionSynchronizationManager;

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

	private volatile @Nullable LockHandle handle;

	/** A handle whose lease ran low, to be revoked ({@code LOST}): no longer leading. */
	private volatile @Nullable LockHandle doomed;

	private volatile long term;

	private volatile @Nullable Instant since;

	private volatile boolean active;

	private volatile long heldBackUntil = System.nanoTime();

	/** Runs a release that must not wait for the caller's transaction. */
	private volatile Executor releases = Runnable::run;

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

	/**
	 * Whether this instance leads: its lease has more than the margin left on the local
	 * clock, and has not been found low since (a renewal that lands late does not make it
	 * lead again: it is revoked).
	 */
	boolean isLeader() {
		LockHandle current = this.handle;
		return current != null && current != this.doomed && current.remaining().compareTo(this.margin) > 0;
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

	/**
	 * Starts the candidacy.
	 * @param beans the role's beans in the order they start
	 * @param releases where a release runs that must not wait for the caller's transaction
	 */
	void activate(List<SmartLifecycle> beans, Executor releases) {
		this.beans = List.copyOf(beans);
		this.releases = releases;
		this.doomed = null;
		this.active = true;
	}

	/**
	 * One attempt to take the role, unless it leads, is held back after a yield, or is not
	 * active; first stops a role bean found running while this instance does not lead (an
	 * explicit start of the context starts every lifecycle bean). Runs on a worker of the
	 * engine's scheduler: it may wait for the database. Never throws: it runs again at the
	 * next interval.
	 */
	void attempt() {
		try {
			if (!this.active || this.handle != null) {
				return;
			}
			stopStrayBeans();
			if (System.nanoTime() - this.heldBackUntil < 0) {
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
		catch (Throwable ex) {
			logger.error("The candidacy for role '" + this.role + "' failed; it tries again at its next interval", ex);
		}
	}

	/**
	 * Whether the leadership is to be revoked now: held, but no more than the margin left;
	 * from then on this instance no longer leads, even if a renewal lands. Never waits:
	 * runs on the scheduler's timer.
	 */
	boolean due() {
		LockHandle current = this.handle;
		if (current == null || current == this.doomed || current.remaining().compareTo(this.margin) > 0) {
			return false;
		}
		this.doomed = current;
		return true;
	}

	/** Revokes a leadership found due ({@link #due()}), if it is still the one found. */
	void revokeLost() {
		this.changes.lock();
		try {
			LockHandle current = this.handle;
			if (current != null && current == this.doomed) {
				revoke(Reason.LOST);
			}
		}
		finally {
			this.changes.unlock();
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

	/**
	 * Grants the leadership: the event, then the role's beans, each started only while the
	 * leadership lasts (a listener or a bean may yield it).
	 */
	private void grant(LockHandle acquired) {
		this.term = acquired.fencingToken();
		this.since = Instant.now();
		this.handle = acquired;
		logger.info("Leadership of role '" + this.role + "' granted to this instance, term " + this.term);
		try {
			this.publisher.publishEvent(new LeadershipGrantedEvent(this.source, this.role, this.term));
		}
		catch (Throwable ex) {
			logger.error("A listener of the leadership of role '" + this.role + "' failed on its grant", ex);
		}
		for (SmartLifecycle bean : this.beans) {
			if (this.handle != acquired) {
				return;
			}
			if (!bean.isRunning()) {
				try {
					bean.start();
				}
				catch (Throwable ex) {
					logger.error("A bean of role '" + this.role + "' failed to start on leadership", ex);
				}
			}
		}
	}

	/** Revokes the leadership: the event, then the role's beans stopped, then the lease released. */
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
			catch (Throwable ex) {
				logger.error("A listener of the leadership of role '" + this.role + "' failed on its revocation", ex);
			}
			stopBeans();
			if (TransactionSynchronizationManager.isSynchronizationActive()) {
				// not after the caller's transaction: released now, on another thread
				release(current);
			}
			else {
				close(current);
			}
		}
		finally {
			this.changes.unlock();
		}
	}

	private void stopBeans() {
		for (int i = this.beans.size() - 1; i >= 0; i--) {
			SmartLifecycle bean = this.beans.get(i);
			if (bean.isRunning()) {
				try {
					bean.stop();
				}
				catch (Throwable ex) {
					logger.error("A bean of role '" + this.role + "' failed to stop on revocation", ex);
				}
			}
		}
	}

	private void stopStrayBeans() {
		this.changes.lock();
		try {
			if (this.handle == null) {
				for (SmartLifecycle bean : this.beans) {
					if (bean.isRunning()) {
						logger.warn("A bean of role '" + this.role + "' (" + bean
								+ ") runs on an instance that does not lead the role; stopping it");
					}
				}
				stopBeans();
			}
		}
		finally {
			this.changes.unlock();
		}
	}

	private void release(LockHandle lease) {
		try {
			this.releases.execute(() -> close(lease));
		}
		catch (RejectedExecutionException ex) {
			close(lease);
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
