package io.github.dblock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * The root object of a {@code @DbLock} key expression: {@code #root.method},
 * {@code #root.args}, {@code #root.target}, {@code #root.targetClass}.
 */
final class KeyExpressionRoot {

	private final Method method;

	private final Object[] args;

	private final @Nullable Object target;

	private final Class<?> targetClass;

	KeyExpressionRoot(Method method, Object[] args, @Nullable Object target, Class<?> targetClass) {
		this.method = method;
		this.args = args;
		this.target = target;
		this.targetClass = targetClass;
	}

	public Method getMethod() {
		return this.method;
	}

	public Object[] getArgs() {
		return this.args;
	}

	public @Nullable Object getTarget() {
		return this.target;
	}

	public Class<?> getTargetClass() {
		return this.targetClass;
	}

}
