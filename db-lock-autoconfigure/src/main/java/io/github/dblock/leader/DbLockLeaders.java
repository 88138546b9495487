package io.github.dblock.leader;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.dblock.DbLockException;
import io.github.dblock.LockChecks;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockScheduler;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.LockRow;
import io.github.dblock.support.DbLockTemplate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.function.SingletonSupplier;

/**
 * Leader election, one election per role: every application instance is a candidate for
 * every configured role ({@code db-lock.leader.roles}); the leader of a role is the holder
 * of its lease in the lock table, the key {@code leader:<role>} (with the key prefix). Its
 * term is the lease's fencing token, so terms strictly increase across leaders, on every
 * node.
 * <ul>
 * <li>A candidate tries to take the lease every poll interval, in the database's time, one
 * statement per role and interval.</li>
 * <li>The leader's lease is renewed by the engine's watchdog. It leads while more than a
 * quarter of the lease is left on the local clock: when renewals fail (the database
 * unreachable or slow), it steps down with a quarter of the lease still to run, so that it
 * no longer says it leads ({@link #isLeader(String)}), and has published
 * {@link LeadershipRevokedEvent}, before the lease can end in the database and another
 * candidate take the role.</li>
 * <li>A leader killed without a word is replaced once its lease has ended, within one poll
 * interval more; one that stops ({@link #stop()}, the context closing) or yields releases
 * the lease, and another candidate takes it within one poll interval.</li>
 * </ul>
 * One per engine: the leases are taken on the engine's worker threads, and a lease mode
 * hold is reentrant by thread, so two of them on one engine would share a role's lease.
 * <p>Runs in the phase {@link #PHASE}: it starts after the engine and stops before the engine's
 * shutdown (and after the web server's graceful shutdown), so that a stopping leader hands
 * over at once.
 *
 * @since 0.1.0
 */
public class DbLockLeaders implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DbLockLeaders.class);

	/**
	 * Above the engine's shutdown ({@code SmartLifecycle.DEFAULT_PHASE - 3072}), below the web
	 * server's graceful shutdown ({@code SmartLifecycle.DEFAULT_PHASE - 2048}).
	 */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2560;

	/** What a role's key starts with, after the key prefix. */
	public static final String KEY_PREFIX = "leader:";

	private final LockEngine engine;

	private final LockRepository repository;

	private final Duration pollInterval;

	private final Duration lease;

	private final Map<String, Candidacy> candidacies = new LinkedHashMap<>();

	private final Object lifecycle = new Object();

	private LockScheduler.@Nullable Tasks tasks;

	private final List<ScheduledFuture<?>> runs = new ArrayList<>();

	private final Supplier<Map<String, List<SmartLifecycle>>> beans;

	/**
	 * Creates the candidacies; none runs before {@link #start()}.
	 * @param template the template whose key prefix the roles' keys take
	 * @param engine the engine that takes the leases
	 * @param repository the repository that reads who leads ({@link #leader(String)})
	 * @param roles the roles; each a valid key, none twice
	 * @param lease the leaders' lease, renewed while they lead
	 * @param pollInterval how often a candidate tries to take a role it does not lead
	 * @param publisher publishes the granted and revoked events
	 * @param beans supplies each role's {@link LeaderRole} beans (a role without beans may be
	 * absent), in the order they start; called once, by the first {@link #start()}, so that
	 * those beans may depend on this one
	 * @throws DbLockException if there is no role, a role is blank, repeated or too long for
	 * the lock table, or a time is not positive, naming the property
	 */
	public DbLockLeaders(DbLockTemplate template, LockEngine engine, LockRepository repository,
			Collection<String> roles, Duration lease, Duration pollInterval, ApplicationEventPublisher publisher,
			Supplier<Map<String, List<SmartLifecycle>>> beans) {
		if (roles.isEmpty()) {
			throw new DbLockException("db-lock.leader.roles is empty: name at least one role");
		}
		if (!LockChecks.isValidLease(lease)) {
			throw new DbLockException("db-lock.leader.lease must be positive, got " + LockChecks.format(lease));
		}
		if (pollInterval.isNegative() || pollInterval.isZero()) {
			throw new DbLockException(
					"db-lock.leader.poll-interval must be positive, got " + LockChecks.format(pollInterval));
		}
		this.engine = engine;
		this.repository = repository;
		this.lease = lease;
		this.pollInterval = pollInterval;
		for (String role : roles) {
			if (role == null || role.isBlank()) {
				throw new DbLockException("db-lock.leader.roles has a blank role: name each role");
			}
			if (this.candidacies.containsKey(role)) {
				throw new DbLockException("db-lock.leader.roles names the role '" + role + "' twice");
			}
			String key;
			try {
				key = template.storedKey(KEY_PREFIX + role);
			}
			catch (DbLockException ex) {
				throw new DbLockException("db-lock.leader.roles has the role '" + role + "', which is not a valid key: "
						+ ex.getMessage(), ex);
			}
			this.candidacies.put(role, new Candidacy(role, key, lease, pollInterval, engine, publisher, this));
		}
		this.beans = SingletonSupplier.of(beans);
	}

	/**
	 * The configured roles.
	 * @return the roles, in the order configured
	 */
	public Set<String> roles() {
		return this.candidacies.keySet();
	}

	/**
	 * Whether this instance leads a role now: it holds the role's lease and more than a
	 * quarter of the lease is left on the local clock. Never waits for I/O.
	 * @param role a configured role
	 * @return whether this instance leads it
	 * @throws IllegalArgumentException if the role is not configured
	 */
	public boolean isLeader(String role) {
		return candidacy(role).isLeader();
	}

	/**
	 * The term of this instance's leadership of a role: the fencing token of the role's
	 * lease, larger than every earlier term of the role on any node. Pass it to a resource
	 * that refuses writes of an older term.
	 * @param role a configured role
	 * @return the term while this instance leads the role, else empty
	 * @throws IllegalArgumentException if the role is not configured
	 */
	public OptionalLong term(String role) {
		return candidacy(role).term();
	}

	/**
	 * Since when this instance leads a role, on the local clock.
	 * @param role a configured role
	 * @return the instant it was granted, while it leads, else empty
	 * @throws IllegalArgumentException if the role is not configured
	 */
	public Optional<Instant> leaderSince(String role) {
		return candidacy(role).since();
	}

	/**
	 * Who leads a role, read from the lock table (one statement): the holder of the role's
	 * lease if that lease has not ended by the database's clock, on whichever node.
	 * @param role a configured role
	 * @return the leader, or empty if none leads now
	 * @throws IllegalArgumentException if the role is not configured
	 */
	public Optional<Leader> leader(String role) {
		Candidacy candidacy = candidacy(role);
		Optional<LockRow> row = this.repository.validRow(candidacy.storedKey());
		return row.map((held) -> new Leader(role, held.owner(), LockEngine.firstFencingToken(held.token()),
				held.acquiredAt(), held.expiresAt()));
	}

	/**
	 * Steps down from a role if this instance leads it: publishes
	 * {@link LeadershipRevokedEvent} ({@code YIELDED}), stops the role's beans and releases
	 * the lease (after the caller's transaction, if it has one), then stays out of the
	 * election for two poll intervals, so that another candidate takes the role; with no
	 * other candidate, this instance takes it again after that.
	 * @param role a configured role
	 * @throws IllegalArgumentException if the role is not configured
	 */
	public void yield(String role) {
		candidacy(role).yieldLeadership();
	}

	/**
	 * Whether this instance is a candidate for a role: started and not stopped.
	 * @param role a configured role
	 * @return whether it is a candidate
	 * @throws IllegalArgumentException if the role is not configured
	 */
	public boolean isCandidate(String role) {
		return candidacy(role).isActive();
	}

	/**
	 * The lease of every leadership.
	 * @return the lease
	 */
	public Duration lease() {
		return this.lease;
	}

	/**
	 * How often a candidate tries to take a role it does not lead.
	 * @return the interval
	 */
	public Duration pollInterval() {
		return this.pollInterval;
	}

	private Candidacy candidacy(String role) {
		Candidacy candidacy = this.candidacies.get(role);
		if (candidacy == null) {
			throw new IllegalArgumentException(
					"The role '" + role + "' is not in db-lock.leader.roles " + this.candidacies.keySet());
		}
		return candidacy;
	}

	/**
	 * Starts every candidacy: the first attempt at once, then every poll interval; the
	 * check of a leader's lease on the scheduler's timer, ten times a poll interval or a
	 * lease, whichever is shorter.
	 */
	@Override
	public void start() {
		synchronized (this.lifecycle) {
			if (this.tasks != null) {
				return;
			}
			Map<String, List<SmartLifecycle>> beans = this.beans.get();
			for (String role : beans.keySet()) {
				if (!this.candidacies.containsKey(role)) {
					throw new DbLockException("A @LeaderRole bean names the role '" + role
							+ "', which is not in db-lock.leader.roles " + this.candidacies.keySet());
				}
			}
			LockScheduler.Tasks group;
			try {
				group = this.engine.scheduler().tasks("leader");
			}
			catch (IllegalStateException ex) {
				logger.warn("The leader election does not start: " + ex.getMessage());
				return;
			}
			long poll = this.pollInterval.toNanos();
			long check = Math.max(Math.min(poll, this.lease.toNanos()) / 10, TimeUnit.MILLISECONDS.toNanos(1));
			for (Candidacy candidacy : this.candidacies.values()) {
				candidacy.activate(beans.getOrDefault(candidacy.role(), List.of()),
						(release) -> group.schedule(release, 0, TimeUnit.NANOSECONDS));
				this.runs.add(group.scheduleWithFixedDelay(candidacy::attempt, 0, poll, TimeUnit.NANOSECONDS));
				this.runs.add(group.scheduleNonBlockingWithFixedDelay(() -> {
					if (candidacy.due()) {
						try {
							group.schedule(candidacy::revokeLost, 0, TimeUnit.NANOSECONDS);
						}
						catch (RejectedExecutionException ex) {
							// stopping: the stop revokes it
						}
					}
				}, check, check, TimeUnit.NANOSECONDS));
			}
			this.tasks = group;
		}
	}

	/**
	 * Ends every candidacy: no more attempts, and each role this instance leads is revoked
	 * ({@code STOPPED}) and its lease released, so that another candidate takes it within
	 * one poll interval.
	 */
	@Override
	public void stop() {
		LockScheduler.Tasks group;
		synchronized (this.lifecycle) {
			group = this.tasks;
			this.tasks = null;
			for (ScheduledFuture<?> run : this.runs) {
				run.cancel(false);
			}
			this.runs.clear();
		}
		try {
			for (Candidacy candidacy : this.candidacies.values()) {
				try {
					candidacy.deactivate();
				}
				catch (RuntimeException ex) {
					logger.error("The candidacy for role '" + candidacy.role() + "' did not stop cleanly", ex);
				}
			}
		}
		finally {
			if (group != null) {
				group.shutdownNow();
			}
		}
	}

	@Override
	public boolean isRunning() {
		synchronized (this.lifecycle) {
			return this.tasks != null;
		}
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
