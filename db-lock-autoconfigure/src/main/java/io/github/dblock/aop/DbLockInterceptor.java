package io.github.dblock.aop;

import java.util.function.Supplier;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationException;

/**
 * Takes the lock of a {@code @DbLock} method, runs the method, releases the lock.
 */
final class DbLockInterceptor implements MethodInterceptor {

	private final DbLockOperationSource operationSource;

	private final KeyExpressionEvaluator evaluator;

	private final Supplier<DbLockTemplate> template;

	DbLockInterceptor(DbLockOperationSource operationSource, KeyExpressionEvaluator evaluator,
			Supplier<DbLockTemplate> template) {
		this.operationSource = operationSource;
		this.evaluator = evaluator;
		this.template = template;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		DbLockOperation operation = this.operationSource.getOperation(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		String key = lockKey(operation, invocation, target, targetClass);
		try (LockHandle handle = acquire(operation, key)) {
			return invocation.proceed();
		}
	}

	private LockHandle acquire(DbLockOperation operation, String key) {
		try {
			return this.template.get().acquire(key, operation.waitTime(), operation.lease());
		}
		catch (LockAcquisitionException ex) {
			throw ex;
		}
		catch (DbLockException ex) {
			throw new DbLockException("@DbLock on " + operation.method() + ": " + ex.getMessage(), ex);
		}
	}

	private String lockKey(DbLockOperation operation, MethodInvocation invocation, @Nullable Object target,
			Class<?> targetClass) {
		String expression = operation.keyExpression();
		if (expression == null) {
			return operation.name();
		}
		Object value;
		try {
			value = this.evaluator.evaluate(expression, operation.methodKey(),
					new KeyExpressionRoot(invocation.getMethod(), invocation.getArguments(), target, targetClass));
		}
		catch (EvaluationException ex) {
			throw new DbLockException("@DbLock(key = \"" + expression + "\") on " + operation.method()
					+ " could not be evaluated: " + ex.getMessage(), ex);
		}
		String text = (value != null) ? value.toString() : null;
		if (text == null || text.isBlank()) {
			throw new DbLockException("@DbLock(key = \"" + expression + "\") on " + operation.method() + " evaluated to "
					+ ((text == null) ? "null" : "a blank string") + "; a lock needs a key");
		}
		return operation.name() + ":" + text;
	}

}
