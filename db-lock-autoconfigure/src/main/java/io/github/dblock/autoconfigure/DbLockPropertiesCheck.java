package io.github.dblock.autoconfigure;

import java.time.Duration;

import io.github.dblock.LockChecks;

import org.springframework.core.env.Environment;

/**
 * Checks db-lock's properties at start-up, all at once, and fails with a
 * {@link DbLockConfigurationException} that names the first property out of range as the
 * user wrote it ({@code db-lock.default-wait=-5s}, not {@code PT-5S}), writes every other
 * duration with {@link LockChecks#format(Duration)}, and says what to do. Only values the
 * user set fail it: a statement timeout left unset is chosen to fit the default lease
 * ({@link DbLockProperties#statementTimeout()}), so that a lease too short for any fails
 * naming the lease.
 */
final class DbLockPropertiesCheck {

	private final DbLockProperties properties;

	private final Environment environment;

	DbLockPropertiesCheck(DbLockProperties properties, Environment environment) {
		this.properties = properties;
		this.environment = environment;
	}

	void check() {
		DbLockProperties p = this.properties;
		// the template's defaults, by the rules of every lock request
		if (!LockChecks.isValidLease(p.getDefaultLease())) {
			fail("db-lock.default-lease", p.getDefaultLease(), "must be positive: a lease must last some time",
					"Set a positive duration, such as 1s or 500ms.");
		}
		if (!LockChecks.isValidWait(p.getDefaultWait())) {
			fail("db-lock.default-wait", p.getDefaultWait(), "must not be negative: use 0 for no wait",
					"Set 0 or a positive duration.");
		}
		// the engine takes no zero turn: 0 would pass here and fail later, outside this check
		positive("db-lock.local-turn", p.getLocalTurn(),
				"a turn must last some time (1ms hands a lock to another instance almost at once)");
		positive("db-lock.backoff.initial", p.getBackoff().getInitial(), "a pause between attempts must last some time");
		if (p.getBackoff().getMax().compareTo(p.getBackoff().getInitial()) < 0) {
			fail("db-lock.backoff.max", p.getBackoff().getMax(), "is shorter than db-lock.backoff.initial ("
					+ written("db-lock.backoff.initial", p.getBackoff().getInitial()) + ")",
					"Make db-lock.backoff.max at least db-lock.backoff.initial.");
		}
		positive("db-lock.reaper.interval", p.getReaper().getInterval(), "the reaper must wait between runs");
		if (p.getReaper().getBatchSize() < 1) {
			fail("db-lock.reaper.batch-size", p.getReaper().getBatchSize(), "must be at least 1",
					"Set it to the number of expired rows one delete may remove (default 1000).");
		}
		positive("db-lock.history.retention", p.getHistory().getRetention(), "the log must keep its rows some time");
		positive("db-lock.history.flush-interval", p.getHistory().getFlushInterval(),
				"the log's writer must wait between writes");
		positive("db-lock.recovery.interval", p.getRecovery().getInterval(), "the recovery job must wait between runs");
		if (p.getRecovery().getMaxHold() != null) {
			positive("db-lock.recovery.max-hold", p.getRecovery().getMaxHold(), "a hold must be allowed some time");
		}
		Duration statementTimeout = p.getStatementTimeout();
		if (statementTimeout != null && statementTimeout.toMillis() < 1) {
			fail("db-lock.statement-timeout", statementTimeout, "must be at least 1ms",
					"Set it to the longest one lock statement may take, or leave it unset (a third of "
							+ "db-lock.default-lease, at most "
							+ LockChecks.format(DbLockProperties.MAX_DEFAULT_STATEMENT_TIMEOUT) + ").");
		}
		notNegative("db-lock.shutdown.grace-period", p.getShutdown().getGracePeriod(),
				"use 0 to release held locks at once at shutdown");
		Duration interval = p.getWatchdog().getInterval();
		if (interval != null && (interval.isZero() || interval.isNegative())) {
			fail("db-lock.watchdog.interval", interval, "must be positive",
					"Leave it unset to renew every third of the lease.");
		}
		if (interval != null && interval.compareTo(p.getDefaultLease()) >= 0) {
			fail("db-lock.watchdog.interval", interval, "is not shorter than db-lock.default-lease ("
					+ written("db-lock.default-lease", p.getDefaultLease())
					+ "): a lease renewed no sooner than it ends lets another node take the lock",
					"Leave db-lock.watchdog.interval unset (a third of the lease), or make it shorter than the lease.");
		}
		Duration margin = p.renewalMargin();
		if (statementTimeout != null && statementTimeout.compareTo(margin) >= 0) {
			fail("db-lock.statement-timeout", statementTimeout,
					"is not shorter than the renewal margin of the default lease (" + LockChecks.format(margin)
							+ ": db-lock.default-lease minus the renewal interval): a renewal that hangs that long "
							+ "leaves no time to try again before the lease ends",
					"Leave db-lock.statement-timeout unset (half the renewal margin, at most "
							+ LockChecks.format(DbLockProperties.MAX_DEFAULT_STATEMENT_TIMEOUT)
							+ "), make it shorter, or make db-lock.default-lease longer.");
		}
		if (statementTimeout == null && p.statementTimeout().toMillis() < 1) {
			// half the margin, the default, would be under a millisecond: the lease or the interval is to blame
			String property = (interval != null) ? "db-lock.watchdog.interval" : "db-lock.default-lease";
			fail(property, (interval != null) ? interval : p.getDefaultLease(),
					"leaves a renewal margin of " + LockChecks.format(margin) + " (db-lock.default-lease minus the "
							+ "renewal interval), too short for one lock statement: db-lock.statement-timeout, half "
							+ "the margin when not set, must be at least 1ms",
					(interval != null)
							? "Make db-lock.watchdog.interval at least 2ms shorter than db-lock.default-lease, or leave "
									+ "it unset (a third of the lease)."
							: "Make db-lock.default-lease at least 3ms.");
		}
		if (p.getPool().getSize() < 0 || (p.getPool().getSize() == 0 && this.environment.containsProperty("db-lock.pool.size"))) {
			fail("db-lock.pool.size", p.getPool().getSize(), "must be at least 1",
					"Leave it unset to share the application's pool.");
		}
		positive("db-lock.pool.connection-timeout", p.getPool().getConnectionTimeout(),
				"a lock statement must be allowed to wait for a connection");
	}

	private void positive(String property, Duration value, String why) {
		if (value.isZero() || value.isNegative()) {
			fail(property, value, "must be positive: " + why, "Set a positive duration, such as 1s or 500ms.");
		}
	}

	private void notNegative(String property, Duration value, String why) {
		if (value.isNegative()) {
			fail(property, value, "must not be negative: " + why, "Set 0 or a positive duration.");
		}
	}

	private void fail(String property, Object value, String problem, String action) {
		throw new DbLockConfigurationException(property + "=" + written(property, value) + " " + problem + ".", action);
	}

	/** The value as the user wrote it, where the environment has it. */
	private String written(String property, Object value) {
		String raw = this.environment.getProperty(property);
		if (raw != null) {
			return raw;
		}
		return (value instanceof Duration duration) ? LockChecks.format(duration) : String.valueOf(value);
	}

}
