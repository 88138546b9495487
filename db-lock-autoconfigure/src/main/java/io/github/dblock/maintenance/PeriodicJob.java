package io.github.dblock.maintenance;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.dblock.LockChecks;
import io.github.dblock.engine.LockScheduler;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * A job that runs at a fixed delay on the engine's {@link LockScheduler}, from
 * {@link #start()} to {@link #stop()}, in the phase {@link #PHASE}.
 */
abstract class PeriodicJob implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(PeriodicJob.class);

	/**
	 * Below the engine's shutdown in the auto-configuration
	 * ({@code SmartLifecycle.DEFAULT_PHASE - 3072}): a job starts before it and stops after
	 * the engine has shut down, so that the holds given up by the shutdown are logged.
	 */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private final LockScheduler scheduler;

	private final String name;

	private final Duration interval;

	private final boolean interruptOnStop;

	/** Guards the tasks and the run (not this: a subclass may lock it for I/O). */
	private final Object lifecycle = new Object();

	private LockScheduler.@Nullable Tasks tasks;

	private @Nullable ScheduledFuture<?> run;

	PeriodicJob(LockScheduler scheduler, String name, Duration interval, boolean interruptOnStop) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException(
					"The interval of the " + name + " must be positive, got " + LockChecks.format(interval));
		}
		this.scheduler = scheduler;
		this.name = name;
		this.interval = interval;
		this.interruptOnStop = interruptOnStop;
	}

	/** Runs the job once on the scheduler's thread; never throws. */
	abstract void runLogged();

	/** Called by {@link #stop()} once the job will run no more on the scheduler. */
	void stopped() {
	}

	/**
	 * Runs the job every interval, the first time after one interval; once the engine has
	 * shut down (a context stopped and started again), it does not run, and says so at WARN.
	 */
	@Override
	public void start() {
		synchronized (this.lifecycle) {
			if (this.tasks != null) {
				return;
			}
			LockScheduler.Tasks tasks;
			try {
				tasks = this.scheduler.tasks(this.name);
			}
			catch (IllegalStateException ex) {
				logger.warn("The " + this.name + " does not start: " + ex.getMessage());
				return;
			}
			long nanos = this.interval.toNanos();
			this.run = tasks.scheduleWithFixedDelay(this::runLogged, nanos, nanos, TimeUnit.NANOSECONDS);
			this.tasks = tasks;
		}
	}

	@Override
	public void stop() {
		LockScheduler.Tasks tasks;
		ScheduledFuture<?> run;
		synchronized (this.lifecycle) {
			tasks = this.tasks;
			run = this.run;
			this.tasks = null;
			this.run = null;
		}
		if (tasks != null && run != null) {
			run.cancel(this.interruptOnStop);
			tasks.shutdownNow();
		}
		stopped();
	}

	@Override
	public boolean isRunning() {
		synchronized (this.lifecycle) {
			return this.tasks != null;
		}
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
