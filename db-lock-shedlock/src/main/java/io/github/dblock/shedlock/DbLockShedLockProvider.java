package io.github.dblock.shedlock;

import java.time.Duration;
import java.util.Optional;

import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockContextHolder;
import io.github.dblock.DbLockException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.support.DbLockTemplate;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link LockProvider} whose locks are db-lock's: an application that uses
 * {@code @EnableSchedulerLock} and {@code @SchedulerLock} moves to db-lock by replacing its
 * {@code LockProvider} bean with this one (or removing it, where the auto-configuration
 * supplies this one). Each lock is one attempt in db-lock's lease mode, never a wait
 * (ShedLock skips a run whose lock is held):
 * <ul>
 * <li>the lock's name is the key, stored as {@code @DbLock} keys are
 * ({@code [db-lock.key-prefix:]name});</li>
 * <li>{@code lockAtMostFor} is a fixed lease, not renewed, timed by the database's
 * clock;</li>
 * <li>{@code lockAtLeastFor} is the minimum hold: an unlock before it has passed since the
 * acquisition (in the database's time) leaves the key taken until it has, for every node
 * including this one;</li>
 * <li>{@link SimpleLock#unlock()} releases, and then reports a lease that was lost while
 * the task ran as {@code @DbLock} does ({@code db-lock.on-lost-lease}): with the default
 * policy it throws {@link io.github.dblock.LockLostException}, which the scheduler logs;</li>
 * <li>{@link SimpleLock#extend(Duration, Duration)} (ShedLock's
 * {@code LockExtender.extendActiveLock}) extends the fixed lease to {@code lockAtMostFor}
 * from now, on the thread that took the lock, keeping its fencing token.</li>
 * </ul>
 * The task runs on the thread that took the lock, where {@link DbLockContext#current()}
 * gives the lock's handle and its fencing token. Every lock counts in db-lock's meters and
 * shows in its endpoint, under the name of the ShedLock lock.
 * <p>
 * This provider is not an {@code ExtensibleLockProvider}: ShedLock's
 * {@code KeepAliveLockProvider} extends from a thread of its own, which a db-lock lease
 * does not allow; a job that needs its lease renewed while it runs takes a {@code @DbLock}
 * without a fixed lease instead.
 *
 * @since 0.1.0
 */
public class DbLockShedLockProvider implements LockProvider {

	private final LockEngine engine;

	private final DbLockTemplate template;

	/**
	 * Creates a provider.
	 * @param engine the engine that takes the locks
	 * @param template the template whose key prefix the keys get and whose lost-lease
	 * policy an unlock applies: the application's {@code DbLockTemplate} bean, for the
	 * same keys and reports as {@code @DbLock}
	 */
	public DbLockShedLockProvider(LockEngine engine, DbLockTemplate template) {
		this.engine = engine;
		this.template = template;
	}

	/**
	 * Takes the lock if no other owner holds it, without waiting.
	 * @param configuration the lock's name, {@code lockAtMostFor} (the lease, which must be
	 * positive) and {@code lockAtLeastFor} (the minimum hold)
	 * @return the lock, to be unlocked, or empty if another owner or this thread holds it,
	 * or held it less than its {@code lockAtLeastFor} ago
	 * @throws DbLockException for a name too long for the lock table, a zero
	 * {@code lockAtMostFor}, or a database failure
	 */
	@Override
	public Optional<SimpleLock> lock(LockConfiguration configuration) {
		String key = this.template.storedKey(configuration.getName());
		if (heldByThisThread(key)) {
			return Optional.empty();
		}
		LockRequest request = new LockRequest(key, Duration.ZERO, configuration.getLockAtMostFor(), false,
				configuration.getLockAtLeastFor());
		return this.engine.tryAcquire(request).map((handle) -> new DbLockSimpleLock(handle, this.engine, this.template));
	}

	/** ShedLock's locks are not reentrant: a key this thread holds is held, as for any other caller. */
	private static boolean heldByThisThread(String key) {
		for (LockHandle held : DbLockContextHolder.all()) {
			if (held.key().equals(key)) {
				return true;
			}
		}
		return false;
	}

}
