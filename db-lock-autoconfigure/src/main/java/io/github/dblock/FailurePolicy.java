package io.github.dblock;

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
	SKIP

}
