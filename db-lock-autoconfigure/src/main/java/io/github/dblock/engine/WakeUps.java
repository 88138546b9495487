package io.github.dblock.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.ReleaseFeed;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The wake-ups of this JVM's waiters by the releases of other owners ({@link ReleaseFeed},
 * PostgreSQL), one per engine, shared by the lease and fair modes: while a waiter of this
 * JVM was refused less than {@link #IDLE_NANOS} ago, one task of the engine's scheduler
 * ({@code db-lock-wake-ups-N}) listens on the feed, on a connection of its own, and hands
 * each key told to every mode, each of which wakes the thread that polls for it if it has
 * one. The first refusal starts the task; a minute with none ends it and gives its
 * connection back. The engine closes it once every mode has shut down.
 * <p>
 * A wake-up only brings an attempt forward: every decision is still the attempt's. A feed
 * that fails is logged at WARN once (and at INFO when it is back), and taken again after
 * {@link #RETRY_NANOS}; meanwhile waiters poll with their back-off, as they do where the
 * database tells no releases.
 */
final class WakeUps {

	/** Wake-ups for no key: polling alone. */
	static final WakeUps NONE = new WakeUps(null, null);

	/** How long the task ends with no refused waiter. */
	static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);

	/** The pause before a failed feed is taken again. */
	static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** The longest the task waits on the feed before it looks whether to stop. */
	private static final Duration AWAIT = Duration.ofMillis(250);

	/** The longest {@link #close()} waits for the task to give its connection back. */
	private static final Duration CLOSE_WAIT = AWAIT.multipliedBy(2);

	private static final Log logger = LogFactory.getLog(WakeUps.class);

	private final @Nullable ReleaseFeed feed;

	private final LockScheduler.@Nullable Tasks tasks;

	private final long idleNanos;

	private final AtomicBoolean listening = new AtomicBoolean();

	/** The modes' consumers of the keys told. */
	private final List<Consumer<String>> woken = new CopyOnWriteArrayList<>();

	/** {@link System#nanoTime()} of the last refusal of a waiter. */
	private volatile long refusedAt;

	private volatile boolean closed;

	/** Whether the current listening task has begun to run. */
	private volatile boolean began;

	/** Completed when the last listening task has given its connection back. */
	private volatile CompletableFuture<Void> stopped = CompletableFuture.completedFuture(null);

	private WakeUps(@Nullable ReleaseFeed feed, LockScheduler.@Nullable Tasks tasks) {
		this(feed, tasks, IDLE_NANOS);
	}

	/**
	 * Wake-ups on a feed.
	 * @param feed the feed, {@code null} for none
	 * @param tasks the group that runs the listening task
	 * @param idleNanos how long the task ends with no refused waiter
	 */
	WakeUps(@Nullable ReleaseFeed feed, LockScheduler.@Nullable Tasks tasks, long idleNanos) {
		this.feed = feed;
		this.tasks = tasks;
		this.idleNanos = idleNanos;
	}

	/**
	 * The wake-ups of an engine: none where the repository has no feed.
	 * @param repository the lease mode's repository
	 * @param scheduler the engine's scheduler, which runs the listening task
	 * @return the wake-ups
	 */
	static WakeUps of(LockRepository repository, LockScheduler scheduler) {
		return repository.releaseFeed().map((feed) -> new WakeUps(feed, scheduler.tasks("wake-ups"))).orElse(NONE);
	}

	/**
	 * Adds a mode to hand the keys told to: called once per mode, before its first
	 * {@link #refused()}; ignored by {@link #NONE}.
	 * @param woken given each key told, on the listening task's thread, whether or not
	 * the mode waits for it; must not block
	 */
	void onRelease(Consumer<String> woken) {
		if (this.feed != null) {
			this.woken.add(woken);
		}
	}

	/**
	 * A waiter of this JVM was refused and is about to pause: listens from now on, if not
	 * yet (a release that commits before the listening starts is not told).
	 */
	void refused() {
		if (this.feed == null || this.closed) {
			return;
		}
		this.refusedAt = System.nanoTime();
		if (!this.listening.get()) {
			start();
		}
	}

	/**
	 * Stops listening and takes no more waiters: waits for the task to give its connection
	 * back (it looks every {@link #AWAIT}), at most {@link #CLOSE_WAIT}, so that the data
	 * source is not closed under it.
	 */
	void close() {
		if (this.feed == null) {
			return;
		}
		this.closed = true;
		this.tasks.shutdownNow();
		if (!this.began) {
			// cancelled before it ran (or it ends at once, seeing the engine closed): nothing to give back
			this.stopped.complete(null);
		}
		try {
			this.stopped.get(CLOSE_WAIT.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException | CancellationException ex) {
			// not stopped in time: the pool takes the connection back when it closes
		}
	}

	private void start() {
		if (this.listening.compareAndSet(false, true)) {
			CompletableFuture<Void> stopped = new CompletableFuture<>();
			this.stopped = stopped;
			this.began = false;
			try {
				this.tasks.schedule(() -> listen(stopped), 0, TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// the engine shut down
				stopped.complete(null);
				this.listening.set(false);
			}
		}
	}

	private void listen(CompletableFuture<Void> stopped) {
		this.began = true;
		ReleaseFeed feed = this.feed;
		boolean failing = false;
		boolean idle = false;
		try {
			while (!this.closed) {
				if (System.nanoTime() - this.refusedAt >= this.idleNanos) {
					idle = true;
					return;
				}
				List<String> keys;
				try {
					keys = feed.await(AWAIT);
				}
				catch (UnsupportedOperationException ex) {
					logger.info("db-lock: no wake-ups on release (" + ex.getMessage() + "); waiters poll with their back-off");
					this.closed = true;
					return;
				}
				catch (RuntimeException ex) {
					if (this.closed) {
						// the pool closed under it at shutdown
						return;
					}
					if (!failing) {
						logger.warn("db-lock: the wake-ups on release failed (" + ex.getMessage()
								+ "); waiters poll with their back-off until they are back", ex);
					}
					failing = true;
					LockSupport.parkNanos(this, RETRY_NANOS);
					continue;
				}
				if (failing) {
					logger.info("db-lock: the wake-ups on release are back");
					failing = false;
				}
				for (String key : keys) {
					for (Consumer<String> mode : this.woken) {
						mode.accept(key);
					}
				}
			}
		}
		finally {
			feed.close();
			stopped.complete(null);
			this.listening.set(false);
			if (idle && !this.closed && System.nanoTime() - this.refusedAt < this.idleNanos) {
				// a waiter refused after the last look: listen on (never after a failure that
				// ended the task: the next refusal starts it again)
				start();
			}
		}
	}

}
