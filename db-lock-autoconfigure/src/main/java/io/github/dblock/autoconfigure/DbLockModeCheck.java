package io.github.dblock.autoconfigure;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.github.dblock.DbLockMode;
import io.github.dblock.aop.DbLockAdvisor;
import io.github.dblock.core.LockEngine;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

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
 */
final class DbLockModeCheck implements SmartInitializingSingleton {

	private final ConfigurableListableBeanFactory beanFactory;

	DbLockModeCheck(ConfigurableListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		checkAvailable(DbLockMode.NAMED, LockEngine::namedLocksUnavailable);
		checkAvailable(DbLockMode.TRANSACTION, LockEngine::transactionLocksUnavailable);
		checkAvailable(DbLockMode.READ, LockEngine::readWriteLocksUnavailable);
		checkAvailable(DbLockMode.WRITE, LockEngine::readWriteLocksUnavailable);
		checkAvailable(DbLockMode.FAIR, LockEngine::fairLocksUnavailable);
		checkTransactionOrder();
	}

	private void checkAvailable(DbLockMode mode, Function<LockEngine, Optional<String>> unavailable) {
		List<String> methods = DbLockGuard.lockedMethods(this.beanFactory, (lock) -> lock.mode() == mode);
		if (methods.isEmpty()) {
			return;
		}
		LockEngine engine = this.beanFactory.getBeanProvider(LockEngine.class).getIfAvailable();
		if (engine == null) {
			return;
		}
		Optional<String> reason = unavailable.apply(engine);
		if (reason.isPresent()) {
			String lease = "Use mode = LEASE (the default) for these methods: its leases are rows written with "
					+ "autocommit, which the nodes of a cluster certify before they commit.";
			throw new DbLockConfigurationException("@DbLock(mode = " + mode + ") on " + methods + " cannot work: "
					+ reason.get() + ".", (mode != DbLockMode.FAIR) ? lease
							: "Let db-lock migrate its tables (db-lock.schema.migrate, on by default) or create them "
									+ "from its script V5__create_fair_queue.sql; on a multi-primary cluster: " + lease);
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
