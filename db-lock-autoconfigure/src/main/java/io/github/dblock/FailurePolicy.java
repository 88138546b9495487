package io.github.dblock;

import java.lang.reflect.Array;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * What a {@code @DbLock} method does when its lock stays held by another owner for the
 * whole wait (unless a {@link DbLock#fallback()} is named, which is called instead).
 *
 * @since 0.1.0
 */
public enum FailurePolicy {

	/**
	 * Throw {@link LockAcquisitionException}.
	 */
	THROW,

	/**
	 * Do not run the method: return {@code null}, {@code Optional.empty()} or a
	 * primitive's zero value, and log at DEBUG.
	 */
	SKIP;

	/**
	 * What a method that is not run returns: {@link #SKIP}'s value, also returned by
	 * {@code @LeaderOnly} and {@code @OncePerSlot} methods that do not run.
	 * @param returnType the method's return type
	 * @return {@code Optional.empty()} for {@code Optional}, the zero value of a primitive
	 * ({@code false}, {@code 0}), else {@code null}
	 */
	public static @Nullable Object skippedResult(Class<?> returnType) {
		if (returnType == Optional.class) {
			return Optional.empty();
		}
		// an element of a new primitive array is that type's zero value
		return (returnType.isPrimitive() && returnType != void.class)
				? Array.get(Array.newInstance(returnType, 1), 0) : null;
	}

}
