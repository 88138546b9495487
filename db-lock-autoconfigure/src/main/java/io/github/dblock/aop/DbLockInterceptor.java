package io.github.dblock.aop;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.FailurePolicy;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockChecks;
import io.github.dblock.LockHandle;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationException;

/**
 * Takes the lock of a {@code @DbLock} method, runs the method, releases the lock, and
 * reports a lease lost meanwhile; when the lock cannot be had, applies the failure policy
 * or calls the fallback.
 */
final class DbLockInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(DbLockInterceptor.class);

	private final DbLockOperationSource operationSource;

	private final KeyExpressionEvaluator evaluator;

	private final Supplier<DbLockTemplate> template;

	private final boolean transactionMode;

	DbLockInterceptor(DbLockOperationSource operationSource, KeyExpressionEvaluator evaluator,
			Supplier<DbLockTemplate> template, boolean transactionMode) {
		this.operationSource = operationSource;
		this.evaluator = evaluator;
		this.template = template;
		this.transactionMode = transactionMode;
	}

	/** Whether this interceptor serves an operation: the transaction mode's, or every other. */
	boolean serves(@Nullable DbLockOperation operation) {
		return operation != null && (operation.mode() == DbLockMode.TRANSACTION) == this.transactionMode;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		DbLockOperation operation = this.operationSource.getOperation(invocation.getMethod(), targetClass);
		if (!serves(operation)) {
			return invocation.proceed();
		}
		DbLockTemplate template = this.template.get();
		LockHandle handle;
		try {
			handle = acquire(template, operation, invocation, target, targetClass);
		}
		catch (LockAcquisitionException ex) {
			return notAcquired(operation, invocation, target, ex);
		}
		catch (DbLockException ex) {
			throw new DbLockException("@DbLock on " + operation.method() + ": " + ex.getMessage(), ex);
		}
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			DbLockTemplate.closeAfterFailure(handle, ex);
			throw ex;
		}
		return template.release(handle, result);
	}

	private LockHandle acquire(DbLockTemplate template, DbLockOperation operation, MethodInvocation invocation,
			@Nullable Object target, Class<?> targetClass) {
		if (!operation.keyExpressions().isEmpty()) {
			List<String> keys = new ArrayList<>(operation.keyExpressions().size());
			for (String expression : operation.keyExpressions()) {
				keys.add(lockKey(operation, expression, invocation, target, targetClass));
			}
			return template.acquireAll(operation.mode(), keys, operation.waitTime(), operation.lease());
		}
		String expression = operation.keyExpression();
		String key = (expression != null) ? lockKey(operation, expression, invocation, target, targetClass)
				: operation.name();
		// the lease of a mode without one is null: the start-up check saw to it
		return switch (operation.mode()) {
			case LEASE -> template.acquire(key, operation.waitTime(), operation.lease(), operation.minimumHold());
			case SEMAPHORE -> template.acquirePermit(key, operation.permits(), operation.waitTime(), operation.lease());
			default -> template.acquire(operation.mode(), key, operation.waitTime(), operation.lease());
		};
	}

	private @Nullable Object notAcquired(DbLockOperation operation, MethodInvocation invocation,
			@Nullable Object target, LockAcquisitionException ex) throws Throwable {
		DbLockOperation.Fallback fallback = operation.fallback();
		if (fallback != null) {
			Object[] arguments = invocation.getArguments();
			if (fallback.takesException()) {
				arguments = Arrays.copyOf(arguments, arguments.length + 1);
				arguments[arguments.length - 1] = ex;
			}
			try {
				return fallback.method().invoke(target, arguments);
			}
			catch (InvocationTargetException failed) {
				throw failed.getTargetException();
			}
		}
		if (operation.onFailure() == FailurePolicy.SKIP) {
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + operation.method() + ": " + ex.getMessage());
			}
			return FailurePolicy.skippedResult(invocation.getMethod().getReturnType());
		}
		throw ex;
	}


	private String lockKey(DbLockOperation operation, String expression, MethodInvocation invocation,
			@Nullable Object target, Class<?> targetClass) {
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
		if (!LockChecks.isValidKey(text)) {
			throw new DbLockException("@DbLock(key = \"" + expression + "\") on " + operation.method() + " evaluated to "
					+ ((text == null) ? "null" : "a blank string") + "; a lock needs a key");
		}
		return operation.name() + ":" + text;
	}

}
