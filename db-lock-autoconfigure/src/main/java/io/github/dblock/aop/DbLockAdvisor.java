package io.github.dblock.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import io.github.dblock.support.DbLockTemplate;
import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.function.SingletonSupplier;

/**
 * The advisor that applies {@link io.github.dblock.DbLock}: its pointcut matches
 * annotated methods (and checks every one of a bean's class when the bean is created), its
 * advice takes the lock around the call. There are two: one for the transaction mode,
 * ordered to run inside {@code @Transactional} (begin, lock, commit ends the lock), and one
 * for every other mode, ordered so that, by default, it runs outside: lock, begin, commit,
 * unlock.
 *
 * @since 0.1.0
 */
public final class DbLockAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient DbLockPointcut pointcut;

	private final transient DbLockInterceptor interceptor;

	private final boolean transactionMode;

	/**
	 * Creates the advisor.
	 * @param template supplies the template on the first call, so that creating the advisor
	 * early (auto-proxy creators do) does not create the data source early
	 * @param beanFactory resolves {@code @bean} references in key expressions
	 * @param order the advisor's order
	 */
	public DbLockAdvisor(Supplier<DbLockTemplate> template, BeanFactory beanFactory, int order) {
		this(template, beanFactory, order, false);
	}

	/**
	 * Creates the advisor of the transaction mode, or of every other mode.
	 * @param template supplies the template on the first call, so that creating the advisor
	 * early (auto-proxy creators do) does not create the data source early
	 * @param beanFactory resolves {@code @bean} references in key expressions
	 * @param order the advisor's order
	 * @param transactionMode whether it serves the methods of the transaction mode (and no
	 * other), or those of every other mode
	 */
	public DbLockAdvisor(Supplier<DbLockTemplate> template, BeanFactory beanFactory, int order,
			boolean transactionMode) {
		KeyExpressionEvaluator evaluator = new KeyExpressionEvaluator(beanFactory);
		DbLockOperationSource operationSource = new DbLockOperationSource(evaluator);
		this.interceptor = new DbLockInterceptor(operationSource, evaluator, SingletonSupplier.of(template),
				transactionMode);
		this.pointcut = new DbLockPointcut(operationSource, this.interceptor);
		this.transactionMode = transactionMode;
		setOrder(order);
	}

	/**
	 * Whether it serves the methods of the transaction mode (and no other).
	 * @return whether it does
	 */
	public boolean isTransactionMode() {
		return this.transactionMode;
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	private static final class DbLockPointcut extends StaticMethodMatcherPointcut {

		private final DbLockOperationSource operationSource;

		private final DbLockInterceptor interceptor;

		DbLockPointcut(DbLockOperationSource operationSource, DbLockInterceptor interceptor) {
			this.operationSource = operationSource;
			this.interceptor = interceptor;
			setClassFilter(operationSource::hasOperations);
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return this.interceptor.serves(this.operationSource.getOperation(method, targetClass));
		}

	}

}
