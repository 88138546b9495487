package io.github.dblock.benchmarks;

import java.util.concurrent.locks.LockSupport;

import io.github.dblock.benchmarks.contender.LockContender;
import org.jspecify.annotations.Nullable;

/**
 * The one loop every scenario runs: some threads, each locking the key its
 * {@link KeyScheme} names, holding it for a while (or not at all), then releasing it,
 * from a common start until a common end given in {@link System#nanoTime()} (which is the
 * same clock in every JVM of the machine, so worker processes can share a window).
 */
final class CycleLoop {

	private final LockContender contender;

	private final int threads;

	private final KeyScheme keys;

	private final long holdNanos;

	CycleLoop(LockContender contender, int threads, KeyScheme keys, long holdNanos) {
		this.contender = contender;
		this.threads = threads;
		this.keys = keys;
		this.holdNanos = holdNanos;
	}

	/**
	 * Runs the loop on {@link #threads} threads from {@code startNanos}; a thread starts no
	 * cycle after {@code endNanos}, but finishes (and may still wait in) the one it is in.
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

	/** Parks until a {@link System#nanoTime()} instant. */
	static void parkUntil(long nanos) {
		for (long left = nanos - System.nanoTime(); left > 0; left = nanos - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
	}

	/** One thread's loop and its samples. */
	final class Worker implements Runnable {

		private final int index;

		private final long startNanos;

		private final long endNanos;

		final LongList latencies = new LongList();

		final LongList holdStarts = new LongList();

		final LongList holdEnds = new LongList();

		/** Per completed cycle: the statements this thread sent before it held the lock. */
		final LongList acquireStatements = new LongList();

		/** Statements of acquisitions that failed. */
		long failedStatements;

		private long cycleStatements;

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
			for (long cycle = 0; System.nanoTime() < this.endNanos; cycle++) {
				String key = CycleLoop.this.keys.key(this.index, cycle);
				long begin = System.nanoTime();
				this.cycleStatements = StatementTally.current();
				try {
					if (CycleLoop.this.contender.runLocked(key, this.criticalSection)) {
						this.latencies.add(System.nanoTime() - begin);
					}
					else {
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

		private void hold() {
			this.acquireStatements.add(StatementTally.current() - this.cycleStatements);
			long start = System.nanoTime();
			if (CycleLoop.this.holdNanos > 0) {
				parkUntil(start + CycleLoop.this.holdNanos);
			}
			this.holdStarts.add(start);
			this.holdEnds.add(System.nanoTime());
		}

	}

}
