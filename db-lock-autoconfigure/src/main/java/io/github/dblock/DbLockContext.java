package io.github.dblock;

import java.util.List;
import java.util.Optional;

/**
 * The lock the current thread holds, for code inside a {@code @DbLock} method (or a
 * {@link io.github.dblock.support.DbLockTemplate} call) that passes the fencing token on to the resource it
 * protects:
 *
 * <pre class="code">
 * long fence = DbLockContext.current().orElseThrow().fencingToken();
 * jdbc.update("UPDATE account SET balance = ?, fence = ? WHERE id = ? AND fence &lt; ?", balance, fence, id, fence);
 * </pre>
 *
 * @since 0.1.0
 */
public final class DbLockContext {

	private DbLockContext() {
	}

	/**
	 * The innermost lock the current thread holds.
	 * @return its handle, or empty outside a lock
	 */
	public static Optional<LockHandle> current() {
		return DbLockContextHolder.innermost();
	}

	/**
	 * Every lock the current thread holds: each permit of a semaphore it took
	 * ({@link DbLockMode#SEMAPHORE}, which is not reentrant), and each key of a handle of
	 * several keys, as a handle of its own.
	 * @return the handles, outermost first, or an empty list outside a lock
	 */
	public static List<LockHandle> all() {
		return DbLockContextHolder.all();
	}

}
