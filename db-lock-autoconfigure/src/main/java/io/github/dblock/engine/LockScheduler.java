package io.github.dblock.engine;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The one scheduler of an engine's background work (renewals, connection checks, the
 * deletion of what failed attempts wrote) and of the jobs that use the engine (the reaper,
 * the recovery job, the lock log's writer). Each client takes a {@link Tasks group} of its
 * own, named after it, and schedules its tasks there. What it guarantees:
 * <ul>
 * <li>One thread, {@code db-lock-scheduler-1}, keeps the time and never runs a task that may
 * block: a task scheduled with {@link Tasks#schedule}, {@link Tasks#scheduleWithFixedDelay}
 * is handed, when it is due, to an idle worker or to a new one ({@code db-lock-worker-N}).
 * So a task that blocks on I/O delays no other task: there are as many workers as tasks
 * due at once, and no more (a periodic task runs once at a time; idle workers end after
 * {@link #KEEP_ALIVE_SECONDS} seconds).</li>
 * <li>While a worker runs a task, its thread bears the group's name
 * ({@code db-lock-watchdog-N}, {@code db-lock-reaper-N}...), so that a thread dump says
 * which work it does.</li>
 * <li>A task scheduled with {@link Tasks#scheduleNonBlockingWithFixedDelay} runs on the
 * timer thread itself and must not block (it does no I/O, takes no lock another thread
 * holds while doing I/O): it waits for no statement of any task.</li>
 * <li>A periodic task runs again {@code delay} after its previous run ended, never two
 * runs at once; one that throws is logged and not run again (as with a
 * {@link ScheduledThreadPoolExecutor}).</li>
 * <li>The threads are daemon threads. The scheduler stops once its engine has shut down
 * ({@link #shutdown()}) and every group has been shut down: the engine shuts down its own,
 * a job its own when it stops, whichever is last.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public final class LockScheduler {

	/** The name of the thread that keeps the time, before its number. */
	private static final String TIMER_THREAD = "db-lock-scheduler";

	/** How long an idle worker lives. */
	public static final long KEEP_ALIVE_SECONDS = 60;

	private static final String WORKER_PREFIX = "db-lock-worker-";

	private static final Log logger = LogFactory.getLog(LockScheduler.class);

	/** The least time before a task that could not be handed to a worker is tried again. */
	private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final ScheduledThreadPoolExecutor timer;

	private final ThreadPoolExecutor workers;

	private final Set<Tasks> groups = ConcurrentHashMap.newKeySet();

	private boolean shutdown;

	/** Creates a scheduler; its threads start with the first task. */
	public LockScheduler() {
		CustomizableThreadFactory timerThreads = new CustomizableThreadFactory(TIMER_THREAD + "-");
		timerThreads.setDaemon(true);
		this.timer = new ScheduledThreadPoolExecutor(1, timerThreads);
		this.timer.setRemoveOnCancelPolicy(true);
		CustomizableThreadFactory workerThreads = new CustomizableThreadFactory(WORKER_PREFIX);
		workerThreads.setDaemon(true);
		this.workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
				new SynchronousQueue<>(), workerThreads);
	}

	/**
	 * A group of tasks of one client, shut down together.
	 * @param name what the tasks do, in a thread's name: {@code db-lock-NAME-N}
	 * @return the group
	 * @throws IllegalStateException if the scheduler has been shut down
	 */
	public synchronized Tasks tasks(String name) {
		if (this.shutdown) {
			throw new IllegalStateException("The lock scheduler is shut down: its engine has shut down");
		}
		Tasks tasks = new Tasks("db-lock-" + name + "-");
		this.groups.add(tasks);
		return tasks;
	}

	/**
	 * Takes no more groups, and stops the threads once every group has been shut down (at
	 * once if none is left). Called by the engine when it shuts down.
	 */
	public synchronized void shutdown() {
		this.shutdown = true;
		stopIfDone();
	}

	/**
	 * Whether the scheduler has stopped: shut down, every group shut down.
	 * @return whether its threads are stopping or gone
	 */
	public boolean isTerminated() {
		return this.timer.isShutdown();
	}

	private synchronized void closed(Tasks tasks) {
		this.groups.remove(tasks);
		stopIfDone();
	}

	private void stopIfDone() {
		if (this.shutdown && this.groups.isEmpty()) {
			this.timer.shutdownNow();
			this.workers.shutdown();
		}
	}

	/**
	 * The tasks of one client. Its methods take times as a {@link ScheduledThreadPoolExecutor}'s
	 * do, and its {@link #shutdownNow()} ends its own tasks alone.
	 */
	public final class Tasks {

		private final String threadPrefix;

		private final Set<Task> scheduled = ConcurrentHashMap.newKeySet();

		private volatile boolean shutdown;

		private Tasks(String threadPrefix) {
			this.threadPrefix = threadPrefix;
		}

		/**
		 * Runs a task once, on a worker, after a delay.
		 * @param task the task, which may block
		 * @param delay the delay
		 * @param unit the delay's unit
		 * @return the task's future, which {@link ScheduledFuture#cancel(boolean) cancels} it
		 * @throws RejectedExecutionException if the group is shut down
		 */
		public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
			return start(new Task(this, task, -1, false), unit.toNanos(delay));
		}

		/**
		 * Runs a task on a worker, the first time after {@code initialDelay}, then
		 * {@code delay} after each run ended.
		 * @param task the task, which may block
		 * @param initialDelay the delay of the first run
		 * @param delay the time between the end of a run and the start of the next
		 * @param unit the delays' unit
		 * @return the task's future, which {@link ScheduledFuture#cancel(boolean) cancels} it
		 * @throws RejectedExecutionException if the group is shut down
		 */
		public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
			return start(new Task(this, task, positive(unit.toNanos(delay)), false), unit.toNanos(initialDelay));
		}

		/**
		 * Runs a task that never blocks on the timer thread, the first time after
		 * {@code initialDelay}, then {@code delay} after each run ended: it waits for no other
		 * task's I/O, and must do none itself.
		 * @param task the task, which must not block
		 * @param initialDelay the delay of the first run
		 * @param delay the time between the end of a run and the start of the next
		 * @param unit the delays' unit
		 * @return the task's future, which {@link ScheduledFuture#cancel(boolean) cancels} it
		 * @throws RejectedExecutionException if the group is shut down
		 */
		public ScheduledFuture<?> scheduleNonBlockingWithFixedDelay(Runnable task, long initialDelay, long delay,
				TimeUnit unit) {
			return start(new Task(this, task, positive(unit.toNanos(delay)), true), unit.toNanos(initialDelay));
		}

		/**
		 * Whether this group is shut down (and takes no more tasks).
		 * @return whether {@link #shutdownNow()} was called
		 */
		public boolean isShutdown() {
			return this.shutdown;
		}

		/**
		 * Cancels every task of this group, interrupting those that run, and takes no more;
		 * other groups go on. Does not wait for a running task to end.
		 */
		public void shutdownNow() {
			if (this.shutdown) {
				return;
			}
			this.shutdown = true;
			for (Task task : this.scheduled) {
				task.cancel(true);
			}
			closed(this);
		}

		private ScheduledFuture<?> start(Task task, long delayNanos) {
			this.scheduled.add(task);
			if (this.shutdown) {
				task.cancel(false);
				throw new RejectedExecutionException("The " + this.threadPrefix + " tasks are shut down");
			}
			task.arm(delayNanos);
			return task;
		}

		private static long positive(long nanos) {
			if (nanos <= 0) {
				throw new IllegalArgumentException("The delay between runs must be positive, got " + nanos + "ns");
			}
			return nanos;
		}

	}

	/** A task and its future: waits on the timer, runs on a worker or the timer. */
	private final class Task implements ScheduledFuture<Object> {

		private final Tasks group;

		private final Runnable body;

		/** The delay between runs, or -1 for a task that runs once. */
		private final long delayNanos;

		private final boolean onTimer;

		private final CompletableFuture<Object> completion = new CompletableFuture<>();

		private volatile @Nullable ScheduledFuture<?> waiting;

		/** The thread running the task now; guarded by this. */
		private @Nullable Thread runner;

		Task(Tasks group, Runnable body, long delayNanos, boolean onTimer) {
			this.group = group;
			this.body = body;
			this.delayNanos = delayNanos;
			this.onTimer = onTimer;
		}

		void arm(long delayNanos) {
			try {
				this.waiting = LockScheduler.this.timer.schedule(this::due, delayNanos, TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException ex) {
				cancel(false);
				throw ex;
			}
		}

		private void due() {
			if (isDone()) {
				return;
			}
			if (this.onTimer) {
				run();
				return;
			}
			try {
				LockScheduler.this.workers.execute(this::run);
			}
			catch (RejectedExecutionException ex) {
				// the scheduler stopped meanwhile
				cancel(false);
			}
			catch (Throwable ex) {
				// no worker could be had (no thread left): tried again, never dropped in silence
				logger.error("Could not hand a task of " + this.group.threadPrefix + " to a worker; trying again", ex);
				try {
					arm(Math.max(this.delayNanos, RETRY_NANOS));
				}
				catch (RejectedExecutionException rejected) {
					cancel(false);
				}
			}
		}

		private void run() {
			Thread thread = Thread.currentThread();
			String name = thread.getName();
			synchronized (this) {
				if (isDone()) {
					return;
				}
				this.runner = thread;
			}
			if (!this.onTimer) {
				thread.setName(this.group.threadPrefix + name.substring(name.lastIndexOf('-') + 1));
			}
			Throwable failure = null;
			try {
				this.body.run();
			}
			catch (Throwable ex) {
				failure = ex;
			}
			finally {
				synchronized (this) {
					this.runner = null;
				}
				// an interrupt meant for this task ends with it
				Thread.interrupted();
				if (!this.onTimer) {
					thread.setName(name);
				}
			}
			if (failure != null) {
				logger.error("A task of " + this.group.threadPrefix + " failed; it is not run again", failure);
				finish(failure);
			}
			else if (this.delayNanos < 0) {
				finish(null);
			}
			else if (!isDone()) {
				try {
					arm(this.delayNanos);
				}
				catch (RejectedExecutionException ex) {
					// the scheduler stopped meanwhile: cancelled
				}
			}
		}

		private void finish(@Nullable Throwable failure) {
			if (failure != null) {
				this.completion.completeExceptionally(failure);
			}
			else {
				this.completion.complete(null);
			}
			this.group.scheduled.remove(this);
		}

		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			boolean cancelled = this.completion.cancel(false);
			ScheduledFuture<?> waiting = this.waiting;
			if (waiting != null) {
				waiting.cancel(false);
			}
			if (mayInterruptIfRunning) {
				synchronized (this) {
					if (this.runner != null) {
						this.runner.interrupt();
					}
				}
			}
			this.group.scheduled.remove(this);
			return cancelled;
		}

		@Override
		public boolean isCancelled() {
			return this.completion.isCancelled();
		}

		@Override
		public boolean isDone() {
			return this.completion.isDone();
		}

		@Override
		public Object get() throws InterruptedException, ExecutionException {
			return this.completion.get();
		}

		@Override
		public Object get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException,
				TimeoutException {
			return this.completion.get(timeout, unit);
		}

		@Override
		public long getDelay(TimeUnit unit) {
			ScheduledFuture<?> waiting = this.waiting;
			return (waiting != null && !isDone()) ? waiting.getDelay(unit) : 0;
		}

		@Override
		public int compareTo(Delayed other) {
			return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
		}

	}

}
