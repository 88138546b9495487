package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.Optional;

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
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link LockRepository} over JDBC. Each statement runs with {@code NOT_SUPPORTED}
 * propagation: a caller's transaction on the same data source is suspended, the statement
 * runs on a connection of its own in autocommit and commits alone, so neither a slow nor
 * a rolled-back caller transaction touches a lock. A deadlock, lock-wait timeout or
 * duplicate key reported by the database counts as an attempt that did not acquire.
 */
public class JdbcLockRepository implements LockRepository {

	/** The length of the {@code lock_key} column in every migration. */
	public static final int MAX_KEY_LENGTH = 255;

	private static final int RELEASE_ATTEMPTS = 3;

	private static final Log logger = LogFactory.getLog(JdbcLockRepository.class);

	private final JdbcTemplate jdbc;

	private final TransactionTemplate outsideTransaction;

	private final SqlDialect dialect;

	/**
	 * Creates a repository.
	 * @param dataSource the application's data source
	 * @param dialect the SQL of its database, naming the lock table
	 */
	public JdbcLockRepository(DataSource dataSource, SqlDialect dialect) {
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
			Optional<Lease> acquired = this.outsideTransaction
				.execute((status) -> this.dialect.tryAcquire(this.jdbc, key, owner, lease));
			return (acquired != null) ? acquired : Optional.empty();
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
	public boolean release(Lease lease) {
		for (int attempt = 1;; attempt++) {
			try {
				Boolean released = this.outsideTransaction.execute((status) -> this.dialect.release(this.jdbc, lease));
				return Boolean.TRUE.equals(released);
			}
			catch (DataAccessException ex) {
				// a deadlock victim's delete did nothing: run it again, the row is still ours
				if (!isContention(ex) || attempt == RELEASE_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	private boolean isContention(DataAccessException ex) {
		return ex instanceof ConcurrencyFailureException || ex instanceof DuplicateKeyException
				|| this.dialect.isContention(ex);
	}

	@Override
	public int maxKeyLength() {
		return MAX_KEY_LENGTH;
	}

}
