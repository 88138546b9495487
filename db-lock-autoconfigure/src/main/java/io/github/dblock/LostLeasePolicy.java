package io.github.dblock;

/**
 * What a {@code @DbLock} method (or {@link DbLockTemplate#execute}) does when it returns
 * and its lease was lost while it ran. A lost lease is always logged at ERROR when found.
 */
public enum LostLeasePolicy {

	/**
	 * Throw {@link LockLostException}, which carries the method's result.
	 */
	THROW,

	/**
	 * Return the method's result; the ERROR log is the only report.
	 */
	LOG

}
