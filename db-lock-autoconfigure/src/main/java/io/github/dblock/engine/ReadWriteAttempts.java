package io.github.dblock.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository.WriteAttempt;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * The read/write modes' attempts on the database: a reader's, which polls until no writer
 * holds the key or waits for it, and a writer's, which first takes its turn among this
 * JVM's writers of the key ({@link LocalWriters}) and then polls until no one holds it, its
 * intent renewed by every attempt and withdrawn when it gives up. What a failed attempt may
 * have written is withdrawn until it can no longer land ({@link Orphans}).
 */
final class ReadWriteAttempts {

	private static final Log logger = LogFactory.getLog(ReadWriteAttempts.class);

	private final ReadWriteStrategy strategy;

	private final ReadWriteLockRepository repository;

	private final LockEngineSettings settings;

	private final OwnerIds ownerIds = new OwnerIds();

	/** What failed attempts may have written (a holder's row, a writer's intent), withdrawn until it cannot land. */
	private final Orphans orphans;

	/** The writers of this JVM by key: one at a time asks the database or holds the key. */
	private final LocalKeys<LocalWriters> localWriters = new LocalKeys<>(LocalWriters::new);

	ReadWriteAttempts(ReadWriteStrategy strategy, ReadWriteLockRepository repository, LockEngineSettings settings,
			LockScheduler scheduler) {
		this.strategy = strategy;
		this.repository = repository;
		this.settings = settings;
		this.orphans = new Orphans("rows and intents", this::withdrawAll, scheduler);
	}

	/** The writers of this JVM by key, now. */
	Collection<LocalWriters> localWriters() {
		return this.localWriters.inUse();
	}

	/** Stops withdrawing orphans. */
	void close() {
		this.orphans.close();
	}

	@Nullable Taken read(LockRequest request, long deadline) throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			if (this.strategy.isClosed()) {
				return null;
			}
			// a fresh owner per attempt: a row left by a failed attempt never blocks the next
			String owner = this.ownerIds.next();
			long sentAt = System.nanoTime();
			Lease lease;
			try {
				lease = this.repository.tryRead(request.key(), owner, request.lease()).orElse(null);
			}
			catch (DataAccessException ex) {
				if (!(ex instanceof CannotGetJdbcConnectionException)) {
					// the statement was sent: the database may have committed the reader's row, or commit it later
					this.orphans.abandon(request.key(), owner, request.lease());
				}
				throw AbstractLockStrategy.failed(request, ex);
			}
			if (lease != null) {
				return new Taken(lease, sentAt, null);
			}
			if (!this.strategy.pause(this.settings.backoff(), attempt, deadline)) {
				return null;
			}
		}
	}

	/**
	 * Takes the key for writing: first the turn among this JVM's writers of the key (so that
	 * one of them at a time polls the database), then the key; the turn is kept while the key
	 * is held.
	 */
	@Nullable Taken write(LockRequest request, long deadline) throws InterruptedException {
		LocalWriters local = enter(request.key());
		boolean turn = false;
		Taken taken = null;
		try {
			turn = local.permit.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			if (turn) {
				taken = this.strategy.holdBack(local.holdBackUntil, deadline) ? writeInTurn(request, deadline, local)
						: null;
				if (taken != null && local.turnStart == 0) {
					local.turnStart = taken.sentAt();
				}
			}
			return taken;
		}
		finally {
			if (taken == null) {
				if (turn) {
					local.permit.release();
				}
				exit(local);
			}
		}
	}

	private @Nullable Taken writeInTurn(LockRequest request, long deadline, LocalWriters local)
			throws InterruptedException {
		String owner = this.ownerIds.next();
		boolean again = false;
		boolean taken = false;
		try {
			for (int attempt = 0;; attempt++) {
				if (this.strategy.isClosed()) {
					return null;
				}
				long sentAt = System.nanoTime();
				WriteAttempt result;
				try {
					result = this.repository.tryWrite(request.key(), owner, request.lease(), again);
				}
				catch (DataAccessException ex) {
					// withdrawn below: its intent, and its row if the insert committed; and again
					// until the statement can no longer commit
					if (!(ex instanceof CannotGetJdbcConnectionException)) {
						this.orphans.abandon(request.key(), owner, request.lease());
					}
					throw AbstractLockStrategy.failed(request, ex);
				}
				if (result.lease() != null) {
					taken = true;
					return new Taken(result.lease(), sentAt, local);
				}
				again = result.intent();
				if (!this.strategy.pause(this.settings.backoff(), attempt, deadline)) {
					return null;
				}
			}
		}
		finally {
			if (!taken) {
				withdraw(request.key(), owner, request.lease());
			}
		}
	}

	/**
	 * Withdraws what an acquisition that gives up wrote, at once (its intent holds readers
	 * back); if that fails, again off this thread until its lease would have ended.
	 */
	private void withdraw(String key, String owner, Duration lease) {
		try {
			this.repository.withdraw(key, owner);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not withdraw the attempt of " + owner + " on lock '" + key + "'; trying again", ex);
			this.orphans.abandon(key, owner, lease);
		}
	}

	/**
	 * Withdraws orphans one by one (the repository has no batched withdrawal); one that
	 * fails is tried again in a later round and keeps no other from its turn.
	 */
	int withdrawAll(Map<String, String> keysByOwner) {
		int deleted = 0;
		for (Map.Entry<String, String> orphan : keysByOwner.entrySet()) {
			try {
				deleted += this.repository.withdraw(orphan.getValue(), orphan.getKey());
			}
			catch (RuntimeException ex) {
				logger.debug("Could not withdraw the attempt of " + orphan.getKey() + " at '" + orphan.getValue()
						+ "' yet: " + ex.getMessage());
			}
		}
		return deleted;
	}

	private LocalWriters enter(String key) {
		return this.localWriters.enter(key);
	}

	void exit(LocalWriters local) {
		this.localWriters.exit(local);
	}

	/**
	 * What a successful attempt took, when its statement was sent, and the local writers'
	 * turn it holds (a writer's).
	 */
	record Taken(Lease lease, long sentAt, @Nullable LocalWriters local) {
	}

}
