package io.github.dblock.benchmarks;

import java.util.concurrent.locks.LockSupport;

import io.github.dblock.benchmarks.contender.LockContender;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * The one loop every scenario and curve runs: some threads, each locking the key its
 * {@link KeyScheme} names, holding it for a while (or not at all), then releasing it,
 * from a common start until a common end given in {@link System#nanoTime()} (which is the
 * same clock in every JVM of the machine, so worker processes can share a window).
 * <p>
 * Latencies go to HdrHistograms, one per thread, merged at the end: a cycle whose
 * acquisition sent a statement (counted by {@link StatementTally}, so the contender's data
 * source must be a counting one) to {@link Outcome#latencies}, one that sent none (a key
 * handed over inside the JVM) to {@link Outcome#localLatencies}. The critical sections'
 * start and end are kept only when asked for ({@code recordHolds}: the hot key, at most a
 * thousand holds a second).
 */
final class CycleLoop {

	private final LockContender contender;

	private final int threads;

	private final KeyScheme keys;

	private final long holdNanos;

	private final boolean recordHolds;

	private volatile long stopNanos = Long.MAX_VALUE;

	private volatile boolean recording = true;

	CycleLoop(LockContender contender, int threads, KeyScheme keys, long holdNanos) {
		this(contender, threads, keys, holdNanos, holdNanos > 0);
	}

	CycleLoop(LockContender contender, int threads, KeyScheme keys, long holdNanos, boolean recordHolds) {
		this.contender = contender;
		this.threads = threads;
		this.keys = keys;
		this.holdNanos = holdNanos;
		this.recordHolds = recordHolds;
	}

	/**
	 * Runs the loop on {@link #threads} threads from {@code startNanos}; a thread starts no
	 * cycle after {@code endNanos} (or after {@link #stop()}), but finishes (and may still
	 * wait in) the one it is in.
	 */
	Outcome run(long startNanos, long endNanos) throws InterruptedException {
		Worker[] workers = new Worker[this.threads];
		Thread[] running = new Thread[this.threads];
		for (int i = 0; i < this.threads; i++) {
			workers[i] = new Worker(i, startNanos, endNanos);
			running[i] = new Thread(workers[i], "bench-" + i);
			running[i].start();
		}
		Outcome outcome = new Outcome(startNanos);
		for (int i = 0; i < this.threads; i++) {
			running[i].join();
			outcome.add(workers[i]);
		}
		return outcome;
	}

	/**
	 * Whether the cycles that start from now on are recorded (they are unless told): so that
	 * a window inside a run (the reaper's) counts only its own cycles, with the threads
	 * already running.
	 */
	void recording(boolean on) {
		this.recording = on;
	}

	/** Ends the run early: no thread starts another cycle. */
	void stop() {
		this.stopNanos = System.nanoTime();
	}

	/** Parks until a {@link System#nanoTime()} instant. */
	static void parkUntil(long nanos) {
		for (long left = nanos - System.nanoTime(); left > 0; left = nanos - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
	}

	/** One thread's loop and its histograms. */
	final class Worker implements Runnable {

		private final int index;

		private final long startNanos;

		private final long endNanos;

		final Histogram latencies = Latencies.nanos();

		final Histogram acquireLatencies = Latencies.nanos();

		final Histogram localLatencies = Latencies.nanos();

		final LongList holdStarts = new LongList();

		final LongList holdEnds = new LongList();

		/** Per completed cycle: the statements this thread sent before it held the lock. */
		final Histogram acquireStatements = Latencies.counts();

		/** Statements of acquisitions that failed. */
		long failedStatements;

		private long cycleStatements;

		private long sentBeforeHold;

		private long heldAt;

		final Runnable criticalSection = this::hold;

		long errors;

		@Nullable Throwable firstError;

		long finishedNanos;

		Worker(int index, long startNanos, long endNanos) {
			this.index = index;
			this.startNanos = startNanos;
			this.endNanos = endNanos;
		}

		@Override
		public void run() {
			parkUntil(this.startNanos);
			for (long cycle = 0; running(System.nanoTime()); cycle++) {
				String key = CycleLoop.this.keys.key(this.index, cycle);
				boolean recorded = CycleLoop.this.recording;
				long begin = System.nanoTime();
				this.cycleStatements = StatementTally.current();
				try {
					if (CycleLoop.this.contender.runLocked(key, this.criticalSection)) {
						long latency = System.nanoTime() - begin;
						if (!recorded) {
							continue;
						}
						if (this.sentBeforeHold > 0) {
							this.latencies.recordValue(latency);
							this.acquireLatencies.recordValue(this.heldAt - begin);
						}
						else {
							this.localLatencies.recordValue(latency);
						}
					}
					else if (recorded) {
						this.errors++;
						this.failedStatements += StatementTally.current() - this.cycleStatements;
					}
				}
				catch (Exception ex) {
					this.errors++;
					this.failedStatements += StatementTally.current() - this.cycleStatements;
					if (this.firstError == null) {
						this.firstError = ex;
					}
				}
			}
			this.finishedNanos = System.nanoTime();
		}

		private boolean running(long now) {
			return now < this.endNanos && now < CycleLoop.this.stopNanos;
		}

		private void hold() {
			long start = System.nanoTime();
			this.heldAt = start;
			this.sentBeforeHold = StatementTally.current() - this.cycleStatements;
			this.acquireStatements.recordValue(this.sentBeforeHold);
			if (CycleLoop.this.holdNanos > 0) {
				parkUntil(start + CycleLoop.this.holdNanos);
			}
			if (CycleLoop.this.recordHolds) {
				this.holdStarts.add(start);
				this.holdEnds.add(System.nanoTime());
			}
		}

	}

}
