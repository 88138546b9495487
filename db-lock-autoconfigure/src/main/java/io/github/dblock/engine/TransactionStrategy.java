package io.github.dblock.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.ConnectionLockRepository;
import io.github.dblock.jdbc.TransactionRolledBackException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The transaction mode ({@link io.github.dblock.DbLockMode#TRANSACTION}): a row lock on the
 * key's row, taken on the caller's transactional connection and ended by its commit or
 * rollback. A key taken again in the same transaction is the same hold, with no statement.
 * Threads do not queue locally: each waits in the database, on its own transaction's
 * connection. A wait the database counts in whole seconds is finished by looks that do not
 * wait, with {@link Backoff}. A lock statement after which the database rolled back the
 * whole transaction (a deadlock on MySQL and MariaDB, a lock-wait timeout with
 * {@code innodb_rollback_on_timeout=ON}) fails with a {@link DbLockException}, never retried:
 * the transaction's earlier holds are lost at once ({@code isHeld()} is {@code false}) and
 * nothing more is locked in what is left of it.
 */
final class TransactionStrategy extends AbstractLockStrategy {

	private static final Log logger = LogFactory.getLog(TransactionStrategy.class);

	private final ConnectionLockRepository repository;

	private final Backoff backoff;

	private final Availability availability;

	private final Events events;

	private final OwnerIds ownerIds = new OwnerIds();

	/** The rows locked now by the transactions of this JVM. */
	private final Set<RowHold> held = ConcurrentHashMap.newKeySet();

	TransactionStrategy(ConnectionLockRepository repository, Backoff backoff, Events events) {
		this.repository = repository;
		this.events = events;
		this.backoff = backoff;
		this.availability = new Availability("transaction", repository::transactionLocksUnavailable);
	}

	@Override
	public List<DbLockMode> modes() {
		return List.of(DbLockMode.TRANSACTION);
	}

	@Override
	public Optional<String> unavailable() {
		return this.availability.now();
	}

	/**
	 * What makes a wait that runs out roll back the caller's whole transaction on this
	 * server, asked now.
	 * @return what shows it, or empty if the wait's statement alone is rolled back
	 */
	Optional<String> timeoutRollsBackTransaction() {
		return Optional.ofNullable(this.repository.lockWaitTimeoutRollsBackTransaction());
	}

	/**
	 * Locks a key in the thread's transaction.
	 * @return the handle, or {@code null} if another transaction held it for the whole wait
	 */
	@Override
	public @Nullable LockHandle acquire(LockRequest request) throws InterruptedException {
		String key = request.key();
		Duration wait = request.waitTime();
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new DbLockException("Could not acquire lock '" + key + "' in the transaction mode: no Spring "
					+ "transaction is active on this thread. Call it inside @Transactional (or a TransactionTemplate); "
					+ "the lock is the transaction's and ends with its commit or rollback");
		}
		this.availability.check(key);
		Holds holds = holds();
		refuseIfRolledBack(key, holds);
		RowHold held = holds.byKey.get(key);
		if (held != null) {
			return held.handle();
		}
		long deadline = System.nanoTime() + wait.toNanos();
		for (int attempt = 0;; attempt++) {
			long remaining = Math.max(0, deadline - System.nanoTime());
			if (lock(key, Duration.ofNanos(remaining), holds)) {
				RowHold hold = new RowHold(key, holds);
				this.events.holdStarted(key, DbLockMode.TRANSACTION, hold.owner, null);
				holds.byKey.put(key, hold);
				this.held.add(hold);
				return hold.handle();
			}
			if (deadline - System.nanoTime() <= 0) {
				return null;
			}
			this.events.contended(key, DbLockMode.TRANSACTION);
			// the engine's shutdown does not end this wait: the lock would be the caller's transaction's
			park(Math.min(this.backoff.delayNanos(attempt), deadline - System.nanoTime()));
		}
	}

	private boolean lock(String key, Duration wait, Holds holds) {
		try {
			return this.repository.lockInTransaction(key, wait);
		}
		catch (TransactionRolledBackException ex) {
			rolledBack(holds, ex.getMessage());
			throw new DbLockException("Could not acquire lock '" + key + "' in the transaction mode: "
					+ ex.getMessage() + ". The transaction was rolled back by the database: the locks it held ("
					+ holds.byKey.keySet() + ") and what it wrote are gone, and its connection would go on in a new "
					+ "transaction. Let this exception end the transaction (no lock is taken in it any more); "
					+ "lock keys in one order to avoid deadlocks", ex);
		}
		catch (IllegalTransactionStateException ex) {
			throw new DbLockException("Could not acquire lock '" + key + "' in the transaction mode: "
					+ ex.getMessage(), ex);
		}
		catch (DataAccessException ex) {
			throw new DbLockException("Could not acquire lock '" + key + "' in the transaction mode: the database "
					+ "failed (" + ex.getMessage() + ")", ex);
		}
	}

	/**
	 * Marks a transaction that the database rolled back: its holds end now (their handles
	 * are no longer held) and are counted lost; nothing more is locked in it.
	 */
	private void rolledBack(Holds holds, @Nullable String reason) {
		holds.rolledBackAt = Instant.now();
		holds.rolledBack = true;
		for (RowHold hold : holds.byKey.values()) {
			this.held.remove(hold);
			this.events.lost(hold.key, DbLockMode.TRANSACTION);
			logger.error("Lost lock '" + hold.key + "' (transaction mode, owner " + hold.owner + "): " + reason);
		}
	}

	private static void refuseIfRolledBack(String key, Holds holds) {
		if (holds.rolledBack) {
			throw new DbLockException("Could not acquire lock '" + key + "' in the transaction mode: the database "
					+ "rolled back this transaction earlier (its locks " + holds.byKey.keySet() + " are gone); "
					+ "no lock is taken in what is left of it. End the transaction and start a new one");
		}
	}

	@Override
	public void held(List<HeldKey> held, long now) {
		for (RowHold hold : this.held) {
			held.add(new HeldKey(hold.key, DbLockMode.TRANSACTION, hold.thread.getName(),
					Duration.ofNanos(now - hold.startedAt)));
		}
	}

	/** Waits in the database, not in this JVM. */
	@Override
	public void waiting(List<WaitingKey> waiting) {
	}

	/** Its waits go on: a lock it takes is its caller's transaction's, which the engine does not end. */
	@Override
	protected void wakeWaiters() {
	}

	/** Its locks end with their transactions, which the engine does not end. */
	@Override
	protected boolean holding() {
		return false;
	}

	@Override
	protected void endHolds() {
	}

	/** The current transaction's holds, bound to it on first use and ended with it. */
	private Holds holds() {
		Holds holds = (Holds) TransactionSynchronizationManager.getResource(this);
		if (holds == null) {
			holds = new Holds();
			TransactionSynchronizationManager.bindResource(this, holds);
			TransactionSynchronizationManager.registerSynchronization(new EndWithTransaction(this, holds));
		}
		return holds;
	}

	/** The keys one transaction holds. */
	private static final class Holds {

		final Map<String, RowHold> byKey = new HashMap<>();

		volatile boolean ended;

		/** The database rolled the transaction back: its locks are gone before it ends. */
		volatile boolean rolledBack;

		/** When this JVM learnt that the database rolled it back. */
		volatile @Nullable Instant rolledBackAt;

	}

	/** Unbinds the holds when the transaction ends (or is suspended, to bind them again after). */
	private record EndWithTransaction(TransactionStrategy mode, Holds holds) implements TransactionSynchronization {

		@Override
		public void suspend() {
			TransactionSynchronizationManager.unbindResource(this.mode);
		}

		@Override
		public void resume() {
			TransactionSynchronizationManager.bindResource(this.mode, this.holds);
		}

		/**
		 * A transaction the database rolled back during a lock statement goes on, on its
		 * connection, as a new one without its earlier writes and locks: it never commits.
		 */
		@Override
		public void beforeCommit(boolean readOnly) {
			if (this.holds.rolledBack) {
				Instant at = this.holds.rolledBackAt;
				throw new LockLostException(String.join(", ", this.holds.byKey.keySet()),
						(at != null) ? at : Instant.now(), null,
						"the database rolled back its transaction while it locked in the transaction mode: what it "
								+ "wrote before is gone and what it wrote after would commit without its locks; the "
								+ "transaction is rolled back");
			}
		}

		@Override
		public void afterCompletion(int status) {
			this.holds.ended = true;
			TransactionSynchronizationManager.unbindResourceIfPossible(this.mode);
			// the transaction ended the locks: their handles leave the thread's list, closed or not
			for (RowHold hold : this.holds.byKey.values()) {
				hold.handles.forEach(Handle::close);
				this.mode.held.remove(hold);
				this.mode.events.released(hold.key, DbLockMode.TRANSACTION,
						System.nanoTime() - hold.startedAt);
				this.mode.events.holdEnded(hold.key, DbLockMode.TRANSACTION, hold.owner, this.holds.rolledBack);
			}
		}

	}

	/** A key's row locked by one transaction, and its token once drawn. */
	private final class RowHold implements Handle.Source {

		final String key;

		/** This hold's owner id, for the listeners (the row lock has none). */
		final String owner = TransactionStrategy.this.ownerIds.next();

		private final Holds holds;

		final Thread thread = Thread.currentThread();

		final long startedAt = System.nanoTime();

		private final ReentrantLock io = new ReentrantLock();

		/** Its handles, which the end of the transaction closes. */
		final List<Handle> handles = new ArrayList<>();

		private long token;

		RowHold(String key, Holds holds) {
			this.key = key;
			this.holds = holds;
		}

		LockHandle handle() {
			Handle handle = new Handle(this);
			this.handles.add(handle);
			return handle;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public boolean isHeld() {
			return !this.holds.ended && !this.holds.rolledBack;
		}

		/**
		 * The transaction ends the lock, not the handles; lost only when the database
		 * rolled the transaction back before it ended.
		 */
		@Override
		public Optional<Instant> lostSince() {
			return Optional.ofNullable(this.holds.rolledBackAt);
		}

		@Override
		public void countDown() {
		}

		@Override
		public long token() {
			// a lock, not a monitor: no virtual thread is pinned across the statement
			this.io.lock();
			try {
				return drawToken();
			}
			finally {
				this.io.unlock();
			}
		}

		private long drawToken() {
			if (this.token == 0) {
				if (this.holds.ended || this.holds.rolledBack) {
					throw new DbLockException("The fencing token of lock '" + this.key + "' was not read while its "
							+ "transaction ran; it ended with the transaction");
				}
				try {
					this.token = TransactionStrategy.this.repository.nextTransactionToken(this.key);
				}
				catch (DataAccessException ex) {
					throw new DbLockException("Could not count the fencing token of lock '" + this.key
							+ "': the database failed (" + ex.getMessage() + ")", ex);
				}
			}
			return this.token;
		}

	}

}
