package io.github.dblock.aop;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.AnnotatedElementKey;

/**
 * A {@code @DbLock} turned into what a call needs, once per method.
 *
 * @param method names the method in messages: {@code OrderService.pay(long)}
 * @param methodKey the method and target class, for the expression cache
 * @param name the lock's name
 * @param keyExpression the key expression, or {@code null} for the name alone
 * @param waitTime the wait, or {@code null} for the default
 * @param lease the lease, or {@code null} for the default
 */
record DbLockOperation(String method, AnnotatedElementKey methodKey, String name, @Nullable String keyExpression,
		@Nullable Duration waitTime, @Nullable Duration lease) {
}
