package io.github.dblock;

import io.github.dblock.support.DbLockTemplate;
import java.util.Optional;

import io.github.dblock.engine.HeldLocks;

/**
 * The lock the current thread holds, for code inside a {@code @DbLock} method (or a
 * {@link DbLockTemplate} call) that passes the fencing token on to the resource it
 * protects:
 *
 * <pre class="code">
 * long fence = DbLockContext.current().orElseThrow().fencingToken();
 * jdbc.update("UPDATE account SET balance = ?, fence = ? WHERE id = ? AND fence &lt; ?", balance, fence, id, fence);
 * </pre>
 */
public final class DbLockContext {

	private DbLockContext() {
	}

	/**
	 * The innermost lock the current thread holds.
	 * @return its handle, or empty outside a lock
	 */
	public static Optional<LockHandle> current() {
		return HeldLocks.innermost();
	}

}
