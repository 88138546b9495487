package io.github.dblock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Releases that share statements, as a database's group commit does: a releasing thread
 * queues its lease and, if no release is running, runs one for every lease queued; if one
 * is running, it waits for it and then runs the next for those queued meanwhile, unless its
 * own was among them. Every caller returns after its own lease's delete is committed; a
 * lone release is one plain statement on the caller's thread, with no hand-over to
 * another thread.
 */
final class GroupRelease {

	private static final Log logger = LogFactory.getLog(GroupRelease.class);

	/** The most leases ended by one statement. */
	static final int MAX_BATCH = 128;

	private final LockRepository repository;

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	/** Held by the thread running a statement for the queue. */
	private final ReentrantLock running = new ReentrantLock();

	GroupRelease(LockRepository repository) {
		this.repository = repository;
	}

	/**
	 * Ends a lease, if its owner and token still hold it, and returns once that is
	 * committed.
	 * @param lease the lease, whose key no other queued lease has
	 * @return whether the lease was still held; a lease ended in one statement with others
	 * counts as held (a count below theirs is logged: it cannot tell which was gone)
	 * @throws RuntimeException the failure of the statement that was to end the lease
	 */
	boolean release(Lease lease) {
		Pending mine = new Pending(lease);
		this.queue.add(mine);
		this.running.lock();
		try {
			while (!mine.done) {
				runBatch();
			}
		}
		finally {
			this.running.unlock();
		}
		RuntimeException failure = mine.failure;
		if (failure != null) {
			throw failure;
		}
		return mine.held;
	}

	private void runBatch() {
		List<Pending> batch = new ArrayList<>();
		for (Pending next; batch.size() < MAX_BATCH && (next = this.queue.poll()) != null;) {
			batch.add(next);
		}
		try {
			boolean held;
			if (batch.size() == 1) {
				held = this.repository.release(batch.get(0).lease, Duration.ZERO);
			}
			else {
				List<Lease> leases = new ArrayList<>(batch.size());
				batch.forEach((pending) -> leases.add(pending.lease));
				int deleted = this.repository.releaseAll(leases);
				held = true;
				if (deleted < leases.size()) {
					logger.warn((leases.size() - deleted) + " of " + leases.size()
							+ " leases released together were gone from the database: " + leases);
				}
			}
			for (Pending pending : batch) {
				pending.held = held;
			}
		}
		catch (RuntimeException ex) {
			for (Pending pending : batch) {
				pending.failure = ex;
			}
		}
		finally {
			for (Pending pending : batch) {
				pending.done = true;
			}
		}
	}

	/** A queued release; written by the thread that runs it, read by its owner after the lock. */
	private static final class Pending {

		final Lease lease;

		boolean held;

		@Nullable RuntimeException failure;

		volatile boolean done;

		Pending(Lease lease) {
			this.lease = lease;
		}

	}

}
