package io.github.dblock.autoconfigure;

import io.github.dblock.aop.DbLockAdvisor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.Advisor;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.transaction.interceptor.TransactionAttributeSourceAdvisor;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;

/**
 * Warns at start-up when {@code @Transactional} would run outside {@code @DbLock}: the
 * lock would then be released before the commit, and the next holder could read data
 * the previous one has not committed yet.
 *
 * @since 0.1.0
 */
public final class DbLockOrderCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(DbLockOrderCheck.class);

	private final ListableBeanFactory beanFactory;

	/**
	 * Creates the check.
	 * @param beanFactory where to find the advisors
	 */
	public DbLockOrderCheck(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (DbLockAdvisor lock : this.beanFactory.getBeansOfType(DbLockAdvisor.class, false, false).values()) {
			if (lock.isTransactionMode()) {
				// runs inside on purpose; DbLockModeCheck checks it
				continue;
			}
			for (Advisor advisor : this.beanFactory.getBeansOfType(Advisor.class, false, false).values()) {
				if (isTransactionAdvisor(advisor) && advisor instanceof Ordered ordered
						&& ordered.getOrder() <= lock.getOrder()) {
					logger.warn("@Transactional (order " + ordered.getOrder() + ") runs outside @DbLock (db-lock.order "
							+ lock.getOrder() + "): a lock is released before its transaction commits. Set db-lock.order "
							+ "below the transaction advisor's order");
				}
			}
		}
	}

	static boolean isTransactionAdvisor(Advisor advisor) {
		return advisor instanceof BeanFactoryTransactionAttributeSourceAdvisor
				|| advisor instanceof TransactionAttributeSourceAdvisor;
	}

}
