package io.github.dblock.actuate;

import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.SqlDialect;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code dbLock} health: up while the lock table can be read (one query for at most
 * one row, on a connection of the lock's own and within {@code db-lock.statement-timeout}),
 * down with the error otherwise; its details are the dialect and the lock table. Unknown
 * for a repository that cannot read its rows.
 */
public class DbLockHealthIndicator extends AbstractHealthIndicator {

	private final LockRepository repository;

	private final SqlDialect dialect;

	/**
	 * Creates the indicator.
	 * @param repository the lock table's repository
	 * @param dialect its SQL, for the details
	 */
	public DbLockHealthIndicator(LockRepository repository, SqlDialect dialect) {
		super("db-lock health check failed");
		this.repository = repository;
		this.dialect = dialect;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.withDetail("dialect", this.dialect.name()).withDetail("table", this.dialect.table());
		try {
			this.repository.rows(1);
		}
		catch (UnsupportedOperationException ex) {
			builder.unknown().withDetail("reason", ex.getMessage());
			return;
		}
		builder.up();
	}

}
