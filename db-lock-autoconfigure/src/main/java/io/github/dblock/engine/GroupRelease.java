package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;

import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.StatementDeadline;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Releases that share statements, as a database's group commit does: a releasing thread
 * queues its lease and, while its lease is not yet taken by a statement, takes one of the
 * allowed statements (waiting for a running one to end if all are running) and runs it
 * for every lease queued then, its own among them unless another statement took it
 * meanwhile; it then waits for the statement that took its lease. Every caller returns
 * after its own lease's delete is committed; a lone release is one plain statement on the
 * caller's thread, with no hand-over to another thread. A caller whose lease another
 * statement took between its queueing and its turn may run one statement for others
 * before it returns: a latency of one statement more for it, never a release left undone.
 */
final class GroupRelease {

	private static final Log logger = LogFactory.getLog(GroupRelease.class);

	/** The most leases ended by one statement. */
	static final int MAX_BATCH = 128;

	private final LockRepository repository;

	private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

	/** One permit per statement that may run at once. */
	private final Semaphore running;

	/**
	 * Creates the release path of one engine.
	 * @param repository where leases are kept
	 * @param statements how many release statements may run at once
	 */
	GroupRelease(LockRepository repository, int statements) {
		this.repository = repository;
		this.running = new Semaphore(statements);
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
		while (!mine.taken) {
			this.running.acquireUninterruptibly();
			try {
				if (!mine.taken) {
					runBatch();
				}
			}
			finally {
				this.running.release();
			}
		}
		mine.awaitDone();
		RuntimeException failure = mine.failure;
		if (failure != null) {
			throw failure;
		}
		return mine.held;
	}

	private void runBatch() {
		List<Pending> batch = new ArrayList<>();
		for (Pending next; batch.size() < MAX_BATCH && (next = this.queue.poll()) != null;) {
			next.taken = true;
			batch.add(next);
		}
		if (batch.isEmpty()) {
			return;
		}
		// the batch holds other threads' releases: it has a statement timeout of its own, never what is left of this
		// thread's acquisition
		try (StatementDeadline own = StatementDeadline.open(System.nanoTime())) {
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
				pending.done.countDown();
			}
		}
	}

	/** A queued release; written by the thread that runs it, read by its owner after the lock. */
	private static final class Pending {

		final Lease lease;

		boolean held;

		@Nullable RuntimeException failure;

		/** Drained from the queue by a thread that runs its statement. */
		volatile boolean taken;

		final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);

		Pending(Lease lease) {
			this.lease = lease;
		}

		void awaitDone() {
			boolean interrupted = false;
			while (true) {
				try {
					this.done.await();
					break;
				}
				catch (InterruptedException ex) {
					// a release is not abandoned halfway: the interrupt is kept for the caller
					interrupted = true;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
