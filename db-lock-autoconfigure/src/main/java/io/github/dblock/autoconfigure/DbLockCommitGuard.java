package io.github.dblock.autoconfigure;

import java.lang.reflect.Method;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.github.dblock.LockLostException;
import io.github.dblock.engine.HeldLocks;
import io.github.dblock.jdbc.CommitGuard;
import io.github.dblock.jdbc.HeldRow;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ReflectionUtils;

/**
 * {@code db-lock.guard-commits}: a transaction on the lock table's data source that commits
 * while its thread holds leases of db-lock (open handles of the lease, read, write and fair
 * modes, and those modes' holds whose release waits for the transaction) first runs
 * the {@link CommitGuard}'s check on its own connection, just before its commit: each lock's
 * row, matched by key, owner and token, is locked and its lease read by the database's clock.
 * If a row is missing, another owner's or ended, or the check fails, the commit fails with a
 * {@link LockLostException} and Spring rolls the transaction back. A row found stays locked
 * until the commit is done: in the lease mode, another owner's take-over, which writes the
 * row, comes after the commit (in the read/write modes on PostgreSQL too, through the key's
 * token-order lock; see the dialect's {@code commitGuardCondition}).
 * <p>
 * After the context's singletons are created, a listener is added to every
 * {@link ConfigurableTransactionManager} bean whose transactions are on the lock table's
 * {@link DataSource} (its {@code getDataSource()} or resource factory: a
 * {@code DataSourceTransactionManager}, a {@code JpaTransactionManager}); the others are
 * named in an INFO message as not guarded. Read-only transactions and nested ones (a
 * savepoint) are not checked; the transaction that encloses them is.
 *
 * @since 0.1.0
 */
public final class DbLockCommitGuard implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(DbLockCommitGuard.class);

	private final CommitGuard guard;

	private final DataSource dataSource;

	private final ListableBeanFactory beanFactory;

	/**
	 * Creates the guard.
	 * @param guard the check
	 * @param dataSource the lock table's data source, whose transactions are guarded
	 * @param beanFactory where the transaction managers are found
	 */
	public DbLockCommitGuard(CommitGuard guard, DataSource dataSource, ListableBeanFactory beanFactory) {
		this.guard = guard;
		this.dataSource = unwrap(dataSource);
		this.beanFactory = beanFactory;
	}

	/** Adds the guard to every transaction manager on the lock table's data source, and says which. */
	@Override
	public void afterSingletonsInstantiated() {
		Map<String, ConfigurableTransactionManager> managers = this.beanFactory
			.getBeansOfType(ConfigurableTransactionManager.class, false, false);
		List<String> guarded = new ArrayList<>();
		List<String> notGuarded = new ArrayList<>();
		for (Map.Entry<String, ConfigurableTransactionManager> manager : managers.entrySet()) {
			String name = manager.getKey() + " (" + manager.getValue().getClass().getSimpleName() + ")";
			(addTo(manager.getValue()) ? guarded : notGuarded).add(name);
		}
		if (!guarded.isEmpty()) {
			logger.info("db-lock: commits guarded (db-lock.guard-commits) in the transactions of " + String.join(", ", guarded));
		}
		if (!notGuarded.isEmpty() || guarded.isEmpty()) {
			logger.info("db-lock: no commit guard (db-lock.guard-commits) in the transactions of "
					+ (notGuarded.isEmpty() ? "any transaction manager: none takes listeners" : String.join(", ", notGuarded)
							+ ": their data source is not the lock table's"));
		}
	}

	/**
	 * Adds the guard to a transaction manager, once, if its transactions are on the lock
	 * table's data source.
	 * @param manager the transaction manager
	 * @return whether it is guarded
	 */
	public boolean addTo(ConfigurableTransactionManager manager) {
		DataSource managed = dataSourceOf(manager);
		if (managed == null || unwrap(managed) != this.dataSource) {
			return false;
		}
		if (!guards(manager)) {
			manager.addListener(new Listener());
		}
		return true;
	}

	/**
	 * Whether this guard is on a transaction manager.
	 * @param manager the transaction manager
	 * @return whether it is
	 */
	public boolean guards(ConfigurableTransactionManager manager) {
		return manager.getTransactionExecutionListeners()
			.stream()
			.anyMatch((listener) -> listener instanceof Listener mine && mine.guard() == this);
	}

	/** Its {@code getDataSource()} (JDBC, JPA, Hibernate), else its resource factory if that is a data source. */
	private static @Nullable DataSource dataSourceOf(ConfigurableTransactionManager manager) {
		Method getter = ReflectionUtils.findMethod(manager.getClass(), "getDataSource");
		if (getter != null && DataSource.class.isAssignableFrom(getter.getReturnType())) {
			return (DataSource) ReflectionUtils.invokeMethod(getter, manager);
		}
		if (manager instanceof ResourceTransactionManager resources
				&& resources.getResourceFactory() instanceof DataSource dataSource) {
			return dataSource;
		}
		return null;
	}

	/** The data source under which Spring binds a transaction's connection: a transaction-aware proxy's target. */
	private static DataSource unwrap(DataSource dataSource) {
		return (dataSource instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null)
				? proxy.getTargetDataSource() : dataSource;
	}

	@Override
	public String toString() {
		return "DbLockCommitGuard[" + this.guard + "]";
	}

	/** The guard as one transaction manager's listener. */
	private final class Listener implements TransactionExecutionListener {

		DbLockCommitGuard guard() {
			return DbLockCommitGuard.this;
		}

		/** Checks the thread's leases on the transaction's connection, just before it commits. */
		@Override
		public void beforeCommit(TransactionExecution transaction) {
			if (!transaction.isNewTransaction() || transaction.isNested() || transaction.isReadOnly()
					|| transaction.isRollbackOnly()) {
				return;
			}
			List<HeldRow> rows = HeldLocks.rows();
			if (rows.isEmpty()) {
				return;
			}
			if (!(TransactionSynchronizationManager.getResource(DbLockCommitGuard.this.dataSource) instanceof ConnectionHolder holder)
					|| holder.getConnectionHandle() == null) {
				if (logger.isDebugEnabled()) {
					logger.debug("db-lock: transaction " + transaction.getTransactionName() + " has no connection of the "
							+ "lock table's data source: its commit is not guarded");
				}
				return;
			}
			List<HeldRow> notHeld;
			try {
				notHeld = DbLockCommitGuard.this.guard.notHeld(holder.getConnection(), rows);
			}
			catch (SQLException | RuntimeException ex) {
				// unknown: treated as lost
				LockLostException lost = new LockLostException(rows.get(0).key(), Instant.now(), null,
						"the commit guard could not confirm that it is held (" + ex.getMessage()
								+ "), so its holder's transaction is rolled back (db-lock.guard-commits)");
				lost.initCause(ex);
				throw lost;
			}
			if (!notHeld.isEmpty()) {
				HeldRow row = notHeld.get(0);
				throw new LockLostException(row.key(), Instant.now(), null, "at its holder's commit, its row (owner "
						+ row.owner() + ", token " + row.token() + ") was gone, another owner's or past its lease by the "
						+ "database's clock, so the transaction is rolled back (db-lock.guard-commits)");
			}
		}

	}

}
