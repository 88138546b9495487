package io.github.dblock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One daemon thread that does what other threads submit, taking at once everything
 * submitted while it was busy or in a short pause after the first submission, up to a
 * batch size. It starts on the first submission.
 * After {@link #close()} it refuses new work, and what was submitted before is done
 * before {@code close} returns.
 *
 * @param <T> a piece of work
 */
final class BatchWorker<T> implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(BatchWorker.class);

	private static final long CLOSE_TIMEOUT_SECONDS = 30;

	/** Put on the queue by {@link #close()}: everything before it is done. */
	private static final Object STOP = new Object();

	private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();

	private final Consumer<List<T>> work;

	private final int batchSize;

	private final long pauseNanos;

	private final ThreadFactory threads;

	private @Nullable Thread thread;

	private boolean closed;

	/**
	 * Creates a worker; its thread starts on the first submission.
	 * @param work does one batch, in submission order; a failure is logged and the worker
	 * goes on
	 * @param batchSize the most pieces of work in one batch
	 * @param pause how long the worker waits for more work after the first submission
	 * @param threads makes the worker's thread
	 */
	BatchWorker(Consumer<List<T>> work, int batchSize, Duration pause, ThreadFactory threads) {
		this.work = work;
		this.batchSize = batchSize;
		this.pauseNanos = pause.toNanos();
		this.threads = threads;
	}

	/**
	 * Hands work to the worker's thread.
	 * @param item the work
	 * @return {@code false}, with nothing done, if the worker is closed
	 */
	synchronized boolean submit(T item) {
		if (this.closed) {
			return false;
		}
		if (this.thread == null) {
			Thread started = this.threads.newThread(this::run);
			started.start();
			this.thread = started;
		}
		this.queue.add(item);
		return true;
	}

	@SuppressWarnings("unchecked")
	private void run() {
		List<Object> taken = new ArrayList<>(this.batchSize);
		List<T> batch = new ArrayList<>(this.batchSize);
		while (true) {
			try {
				taken.add(this.queue.take());
			}
			catch (InterruptedException ex) {
				// only close() stops the worker, after the work submitted before it
				continue;
			}
			if (this.pauseNanos > 0) {
				LockSupport.parkNanos(this, this.pauseNanos);
			}
			this.queue.drainTo(taken, this.batchSize - 1);
			boolean stop = false;
			for (Object item : taken) {
				if (item == STOP) {
					stop = true;
				}
				else {
					batch.add((T) item);
				}
			}
			if (!batch.isEmpty()) {
				try {
					this.work.accept(batch);
				}
				catch (RuntimeException | Error ex) {
					logger.error("Background work failed on " + batch.size() + " items", ex);
				}
			}
			if (stop) {
				return;
			}
			taken.clear();
			batch.clear();
		}
	}

	/**
	 * Refuses new work and waits for what was submitted before.
	 */
	@Override
	public void close() {
		Thread running;
		synchronized (this) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			running = this.thread;
			this.queue.add(STOP);
		}
		if (running == null) {
			return;
		}
		try {
			running.join(TimeUnit.SECONDS.toMillis(CLOSE_TIMEOUT_SECONDS));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (running.isAlive()) {
			logger.warn("Background work still running after " + CLOSE_TIMEOUT_SECONDS + " s: " + this.queue.size()
					+ " submissions wait");
		}
	}

}
