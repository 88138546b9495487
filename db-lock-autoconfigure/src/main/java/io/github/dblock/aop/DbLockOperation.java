package io.github.dblock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import io.github.dblock.DbLockMode;
import io.github.dblock.FailurePolicy;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.AnnotatedElementKey;

/**
 * A {@code @DbLock} turned into what a call needs, once per method.
 *
 * @param method names the method in messages: {@code OrderService.pay(long)}
 * @param methodKey the method and target class, for the expression cache
 * @param name the lock's name
 * @param keyExpression the key expression, or {@code null} for the name alone or for
 * several keys
 * @param keyExpressions the expressions of several keys taken at once, or empty for one key
 * @param waitTime the wait, or {@code null} for the default
 * @param lease the lease, or {@code null} for the default, renewed while held
 * @param minimumHold the least time the lock stays taken
 * @param onFailure what to do when the lock cannot be had and there is no fallback
 * @param fallback the method to call instead when the lock cannot be had, or {@code null}
 * @param mode how the lock is held
 * @param permits the semaphore mode's number of permits, 1 in every other mode
 */
record DbLockOperation(String method, AnnotatedElementKey methodKey, String name, @Nullable String keyExpression,
		List<String> keyExpressions, @Nullable Duration waitTime, @Nullable Duration lease, Duration minimumHold,
		FailurePolicy onFailure, @Nullable Fallback fallback, DbLockMode mode, int permits) {

	/**
	 * A fallback method.
	 * @param method the method
	 * @param takesException whether its last parameter is the exception
	 */
	record Fallback(Method method, boolean takesException) {
	}

}
