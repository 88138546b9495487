package io.github.dblock;

/**
 * What a {@code @DbLock} method (or {@link io.github.dblock.support.DbLockTemplate#execute}) does when it returns
 * and its lease was lost while it ran. A lost lease is always logged at ERROR when found.
 *
 * @since 0.1.0
 */
public enum LostLeasePolicy {

	/**
	 * Throw {@link LockLostException}, which carries the method's result.
	 */
	THROW,

	/**
	 * Return the method's result; the ERROR log is the only report.
	 */
	LOG,

	/**
	 * Make the holder's Spring transaction roll back instead of commit when its lock is no
	 * longer held at commit (lease lost or over by the local clock, named lock's connection
	 * lost), so that a stale holder's writes never commit; then throw
	 * {@link LockLostException} as {@link #THROW} does. Checked just before every commit of
	 * a transaction that began while the thread held a lock, on any transaction manager the
	 * application's auto-configuration customizes ({@code DataSourceTransactionManager},
	 * {@code JpaTransactionManager}).
	 */
	ROLLBACK

}
