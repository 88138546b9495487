package io.github.dblock.jdbc;

import java.util.List;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Sets the thread's transaction synchronizations aside for the length of a lock operation,
 * so that no Spring code ties the lock connection to the caller's transaction; they are
 * not suspended, and nothing else of the caller's changes.
 */
final class SetAsideSynchronizations {

	private SetAsideSynchronizations() {
	}

	/**
	 * Takes the thread's transaction synchronizations away for the length of a lock
	 * operation, so that no Spring code binds the lock connection to the caller's
	 * transaction; they are not suspended, and nothing else of the caller's changes.
	 */
	static List<TransactionSynchronization> setAside() {
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			return List.of();
		}
		List<TransactionSynchronization> synchronizations = TransactionSynchronizationManager.getSynchronizations();
		TransactionSynchronizationManager.clearSynchronization();
		return (synchronizations.isEmpty()) ? EMPTY_BUT_ACTIVE : synchronizations;
	}

	/**
	 * Gives the thread back the synchronizations {@link #setAside()} took.
	 * @param setAside what it returned
	 */
	static void restore(List<TransactionSynchronization> setAside) {
		if (setAside.isEmpty()) {
			return;
		}
		TransactionSynchronizationManager.initSynchronization();
		for (TransactionSynchronization synchronization : setAside) {
			if (synchronization != NO_SYNCHRONIZATION) {
				TransactionSynchronizationManager.registerSynchronization(synchronization);
			}
		}
	}

	/** Marks synchronization that was active with nothing registered. */
	private static final TransactionSynchronization NO_SYNCHRONIZATION = new TransactionSynchronization() {
	};

	private static final List<TransactionSynchronization> EMPTY_BUT_ACTIVE = List.of(NO_SYNCHRONIZATION);

}
