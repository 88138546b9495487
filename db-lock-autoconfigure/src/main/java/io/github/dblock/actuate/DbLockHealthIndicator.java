package io.github.dblock.actuate;

import java.time.Duration;
import java.time.Instant;

import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code dbLock} health: up while the lock table can be read and the database's clock
 * answers (two queries on a connection of the lock's own, each within
 * {@code db-lock.statement-timeout}), down with the error otherwise. Its details:
 * <ul>
 * <li>{@code dialect} and {@code table};</li>
 * <li>{@code clockOffset}: the database clock's offset from this JVM's (positive when the
 * database is ahead), to within half the query's round trip. Leases run on the database's
 * clock whatever it is; a large offset only explains why lease ends look shifted in this
 * JVM's logs;</li>
 * <li>{@code watchdogLag}: how far behind its schedule the lease watchdog is (see
 * {@link LockEngine#watchdogLag()}); near the leases' length it means leases may be
 * lost.</li>
 * </ul>
 * Unknown for a repository that cannot read its rows.
 *
 * @since 0.1.0
 */
public class DbLockHealthIndicator extends AbstractHealthIndicator {

	private final LockRepository repository;

	private final SqlDialect dialect;

	private final @Nullable LockEngine engine;

	/**
	 * Creates the indicator.
	 * @param repository the lock table's repository
	 * @param dialect its SQL, for the details
	 * @param engine the engine whose watchdog's lag is shown, or {@code null}
	 */
	public DbLockHealthIndicator(LockRepository repository, SqlDialect dialect, @Nullable LockEngine engine) {
		super("db-lock health check failed");
		this.repository = repository;
		this.dialect = dialect;
		this.engine = engine;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.withDetail("dialect", this.dialect.name()).withDetail("table", this.dialect.table());
		try {
			this.repository.rows(1);
			long sent = System.nanoTime();
			Instant sentAt = Instant.now();
			Instant databaseNow = this.repository.databaseTime();
			Duration halfTrip = Duration.ofNanos((System.nanoTime() - sent) / 2);
			builder.withDetail("clockOffset", Duration.between(sentAt.plus(halfTrip), databaseNow).toString());
		}
		catch (UnsupportedOperationException ex) {
			builder.unknown().withDetail("reason", ex.getMessage());
			return;
		}
		if (this.engine != null) {
			builder.withDetail("watchdogLag", this.engine.watchdogLag().toString());
		}
		builder.up();
	}

}
