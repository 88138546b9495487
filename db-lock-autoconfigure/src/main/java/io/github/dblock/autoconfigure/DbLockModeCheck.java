package io.github.dblock.autoconfigure;

import java.util.List;
import java.util.Optional;

import io.github.dblock.DbLockMode;
import io.github.dblock.aop.DbLockAdvisor;
import io.github.dblock.engine.LockEngine;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.dao.DataAccessException;

/**
 * Fails start-up where a mode of {@code @DbLock} cannot work as the application is set up:
 * <ul>
 * <li>{@code mode = NAMED} on a database without named locks (H2) or on a multi-primary
 * cluster, where each node gives its own, and {@code mode = TRANSACTION} on such a
 * cluster, where each node locks rows on its own until commit, {@code mode = READ} or
 * {@code WRITE} on such a cluster, where a reader and a writer on different nodes write
 * rows the cluster does not set against each other, and {@code mode = FAIR} where the queue
 * table is missing or on such a cluster, whose nodes each number their own tickets;</li>
 * <li>{@code mode = TRANSACTION} on a bean whose advisors run it outside
 * {@code @Transactional}, where it would find no transaction.</li>
 * </ul>
 * And warns where {@code mode = TRANSACTION} is used on a server whose lock-wait timeout
 * rolls back the whole transaction (MySQL's and MariaDB's
 * {@code innodb_rollback_on_timeout=ON}): there a wait that runs out ends the caller's
 * transaction.
 */
final class DbLockModeCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(DbLockModeCheck.class);

	private final ConfigurableListableBeanFactory beanFactory;

	DbLockModeCheck(ConfigurableListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (DbLockMode mode : DbLockMode.values()) {
			checkAvailable(mode);
		}
		checkTransactionOrder();
		warnOfRollbackOnTimeout();
	}

	/**
	 * A WARN naming the transaction-mode methods where a wait that runs out rolls back the
	 * caller's whole transaction; without such methods an INFO, for {@code DbLockTemplate}
	 * callers of the mode.
	 */
	private void warnOfRollbackOnTimeout() {
		LockEngine engine = this.beanFactory.getBeanProvider(LockEngine.class).getIfAvailable();
		if (engine == null) {
			return;
		}
		Optional<String> rollsBack;
		try {
			rollsBack = engine.transactionLockTimeoutRollsBackTransaction();
		}
		catch (DataAccessException ex) {
			logger.debug("Could not check whether a lock-wait timeout rolls back the whole transaction", ex);
			return;
		}
		if (rollsBack.isEmpty()) {
			return;
		}
		String effect = rollsBack.get() + ": a transaction-mode lock whose wait runs out rolls back the caller's whole "
				+ "transaction (its earlier writes and locks are gone), and the call fails with a DbLockException "
				+ "saying so, never retried. Set innodb_rollback_on_timeout=OFF (the server's default) to have the wait "
				+ "alone rolled back, or use mode = LEASE (the default)";
		List<String> methods = DbLockGuard.lockedMethods(this.beanFactory, (lock) -> lock.mode() == DbLockMode.TRANSACTION);
		if (!methods.isEmpty()) {
			logger.warn("@DbLock(mode = TRANSACTION) on " + methods + ": " + effect + ".");
		}
		else {
			logger.info("db-lock, for DbLockTemplate calls in the TRANSACTION mode: " + effect + ".");
		}
	}

	private void checkAvailable(DbLockMode mode) {
		List<String> methods = DbLockGuard.lockedMethods(this.beanFactory, (lock) -> lock.mode() == mode);
		if (methods.isEmpty()) {
			return;
		}
		LockEngine engine = this.beanFactory.getBeanProvider(LockEngine.class).getIfAvailable();
		if (engine == null) {
			return;
		}
		Optional<String> reason = engine.unavailable(mode);
		if (reason.isPresent()) {
			String lease = "Use mode = LEASE (the default) for these methods: its leases are rows written with "
					+ "autocommit, which the nodes of a cluster certify before they commit.";
			String action = switch (mode) {
				case FAIR -> "Let db-lock migrate its tables (db-lock.schema.migrate, on by default) or create them "
						+ "from its script V5__create_fair_queue.sql; on a multi-primary cluster: " + lease;
				case SEMAPHORE -> "Let db-lock migrate its tables (db-lock.schema.migrate, on by default) or create the "
						+ "table from its script V9__create_semaphore_table.sql.";
				default -> lease;
			};
			throw new DbLockConfigurationException("@DbLock(mode = " + mode + ") on " + methods + " cannot work: "
					+ reason.get() + ".", action);
		}
	}

	private void checkTransactionOrder() {
		for (Advised advised : this.beanFactory.getBeansOfType(Advised.class, false, false).values()) {
			Advisor[] advisors = advised.getAdvisors();
			int transaction = -1;
			for (int i = 0; i < advisors.length; i++) {
				if (DbLockOrderCheck.isTransactionAdvisor(advisors[i])) {
					transaction = i;
				}
				else if (advisors[i] instanceof DbLockAdvisor lock && lock.isTransactionMode() && transaction < 0
						&& hasLaterTransactionAdvisor(advisors, i)) {
					throw new DbLockConfigurationException("@DbLock(mode = TRANSACTION) on "
							+ advised.getTargetClass().getSimpleName() + " would run outside @Transactional (advisor "
							+ "order " + lock.getOrder() + "), where it finds no transaction to lock in.",
							"Give the transaction advisor a higher precedence, e.g. @EnableTransactionManagement(order "
									+ "= 0), or set db-lock.transaction-mode-order above its order.");
				}
			}
		}
	}

	private static boolean hasLaterTransactionAdvisor(Advisor[] advisors, int from) {
		for (int i = from + 1; i < advisors.length; i++) {
			if (DbLockOrderCheck.isTransactionAdvisor(advisors[i])) {
				return true;
			}
		}
		return false;
	}

}
