package io.github.dblock.autoconfigure;

import java.time.Instant;

import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.engine.HeldLocks;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@code db-lock.on-lost-lease=rollback}: a transaction that begins on a thread holding a
 * lock checks, just before it commits, that every lock the thread holds then is still held
 * (lease valid by the local clock, not found lost); if one is not, the commit fails with a
 * {@link LockLostException} and Spring rolls the transaction back, so that a holder whose
 * lock may belong to another node by now never commits what it wrote under it. Registered
 * with the application's transaction managers by Spring Boot's transaction-manager
 * customization, as every {@link TransactionExecutionListener} bean is.
 *
 * @since 0.1.0
 */
public final class DbLockRollbackOnLostLease implements TransactionExecutionListener {

	@Override
	public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
		if (beginFailure == null && TransactionSynchronizationManager.isSynchronizationActive()
				&& !HeldLocks.all().isEmpty()) {
			TransactionSynchronizationManager.registerSynchronization(new CheckBeforeCommit());
		}
	}

	/** Fails the commit while a lock of the thread is no longer held. */
	private static final class CheckBeforeCommit implements TransactionSynchronization {

		@Override
		public void beforeCommit(boolean readOnly) {
			for (LockHandle handle : HeldLocks.all()) {
				if (!handle.isHeld()) {
					throw new LockLostException(handle.key(), handle.lostSince().orElseGet(Instant::now), null,
							"its holder's transaction is rolled back (db-lock.on-lost-lease=rollback)");
				}
			}
		}

	}

}
