package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link LockRepository} over JDBC. Each statement runs on a pooled connection of its own
 * in autocommit and commits alone. Where the calling thread has a Spring transaction, it
 * runs with {@code NOT_SUPPORTED} propagation: the caller's transaction is suspended, so
 * neither a slow nor a rolled-back caller transaction touches a lock (and no lock
 * connection is tied to the caller's transaction); elsewhere it runs as it is, with no
 * transaction machinery on the way. A deadlock, lock-wait timeout or
 * duplicate key reported by the database counts as an attempt that did not acquire.
 */
public class JdbcLockRepository implements LockRepository {

	/** The length of the {@code lock_key} column in every migration. */
	public static final int MAX_KEY_LENGTH = 255;

	private static final int WRITE_ATTEMPTS = 3;

	private static final Log logger = LogFactory.getLog(JdbcLockRepository.class);

	private final DataSource dataSource;

	private final JdbcTemplate jdbc;

	private final TransactionTemplate outsideTransaction;

	private final SqlDialect dialect;

	/**
	 * Creates a repository.
	 * @param dataSource the application's data source
	 * @param dialect the SQL of its database, naming the lock table
	 */
	public JdbcLockRepository(DataSource dataSource, SqlDialect dialect) {
		this.dataSource = dataSource;
		this.jdbc = new JdbcTemplate(dataSource);
		DataSourceTransactionManager transactionManager = new DataSourceTransactionManager(dataSource);
		// no synchronization: the connection goes back to the pool as soon as the statement ends
		transactionManager.setTransactionSynchronization(AbstractPlatformTransactionManager.SYNCHRONIZATION_NEVER);
		this.outsideTransaction = new TransactionTemplate(transactionManager);
		this.outsideTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
		this.dialect = dialect;
	}

	/**
	 * The dialect in use.
	 * @return the dialect
	 */
	public SqlDialect dialect() {
		return this.dialect;
	}

	@Override
	public Optional<Lease> tryAcquire(String key, String owner, Duration lease) {
		try {
			return outsideTransaction((jdbc) -> this.dialect.tryAcquire(jdbc, key, owner, lease));
		}
		catch (DataAccessException ex) {
			if (!isContention(ex)) {
				throw ex;
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Attempt to acquire '" + key + "' did not acquire: " + ex.getMessage());
			}
			return Optional.empty();
		}
	}

	@Override
	public boolean release(Lease lease, Duration minimumHold) {
		return retryingContention(() -> outsideTransaction((jdbc) -> this.dialect.release(jdbc, lease, minimumHold)));
	}

	@Override
	public boolean cede(Lease lease, Duration wantedWithin) {
		return retryingContention(() -> outsideTransaction((jdbc) -> this.dialect.cede(jdbc, lease, wantedWithin)));
	}

	@Override
	public int releaseAll(List<Lease> leases) {
		return retryingContention(() -> outsideTransaction((jdbc) -> this.dialect.releaseAll(jdbc, leases)));
	}

	@Override
	public Optional<Instant> renew(Lease lease, Duration duration) {
		return retryingContention(() -> outsideTransaction((jdbc) -> this.dialect.renew(jdbc, lease, duration)));
	}

	@Override
	public int deleteExpired(int limit) {
		return retryingContention(() -> outsideTransaction((jdbc) -> this.dialect.deleteExpired(jdbc, limit)));
	}

	@Override
	public int maxKeyLength() {
		return MAX_KEY_LENGTH;
	}

	private <T> T outsideTransaction(Function<JdbcTemplate, T> statements) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				&& !TransactionSynchronizationManager.hasResource(this.dataSource)) {
			// no transaction on this thread: the statement autocommits on a pooled connection as it is
			return statements.apply(this.jdbc);
		}
		T result = this.outsideTransaction.execute((status) -> statements.apply(this.jdbc));
		if (result == null) {
			throw new IllegalStateException("No result from " + this.dialect);
		}
		return result;
	}

	/** A deadlock victim's write did nothing: run it again, what it checks still holds. */
	private <T> T retryingContention(java.util.function.Supplier<T> write) {
		for (int attempt = 1;; attempt++) {
			try {
				return write.get();
			}
			catch (DataAccessException ex) {
				if (!isContention(ex) || attempt == WRITE_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	private boolean isContention(DataAccessException ex) {
		return ex instanceof ConcurrencyFailureException || ex instanceof DuplicateKeyException
				|| this.dialect.isContention(ex);
	}

}
