package io.github.dblock.benchmarks;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jspecify.annotations.Nullable;

/**
 * What the threads of one or more {@link CycleLoop}s did: the latencies of the completed
 * cycles in HdrHistograms (those whose acquisition reached the database apart from those
 * handed over inside the JVM without a statement), the statements each acquisition sent,
 * when each critical section started and ended (only where asked, for the hot key), the
 * failures, how long the loops ran and the statements the server counted. Written and read
 * as binary so that worker processes can hand theirs to the coordinator.
 */
final class Outcome {

	/** When the loops started, as {@link System#nanoTime()}. */
	final long startNanos;

	/** When the last thread finished its last cycle. */
	long finishedNanos;

	/** Time the loops ran, summed over merged runs of separate windows. */
	long runNanos;

	StatementCounts statements = StatementCounts.ZERO;

	/** Cycles whose acquisition sent at least one statement: acquire + release, nanoseconds. */
	final Histogram latencies = Latencies.nanos();

	/** Of the cycles that reached the database: the acquisition alone, until the lock was held. */
	final Histogram acquireLatencies = Latencies.nanos();

	/** Cycles whose acquisition sent none: the key was handed over inside the JVM. */
	final Histogram localLatencies = Latencies.nanos();

	/** Per completed cycle, the statements its thread sent before holding (counted by {@link StatementTally}). */
	final Histogram acquireStatements = Latencies.counts();

	final LongList holdStarts = new LongList();

	final LongList holdEnds = new LongList();

	/** Per hold, the JVM it was in (the coordinator's index of the worker). */
	final LongList holdJvms = new LongList();

	long failedAcquireStatements;

	/** Statements sent while waiting: see {@link #countWaiterStatements}. */
	long waiterStatements;

	long errors;

	@Nullable String firstError;

	Outcome(long startNanos) {
		this.startNanos = startNanos;
		this.finishedNanos = startNanos;
	}

	void add(CycleLoop.Worker worker) {
		this.finishedNanos = Math.max(this.finishedNanos, worker.finishedNanos);
		this.runNanos = this.finishedNanos - this.startNanos;
		this.acquireStatements.add(worker.acquireStatements);
		this.failedAcquireStatements += worker.failedStatements;
		this.latencies.add(worker.latencies);
		this.acquireLatencies.add(worker.acquireLatencies);
		this.localLatencies.add(worker.localLatencies);
		this.holdStarts.addAll(worker.holdStarts);
		this.holdEnds.addAll(worker.holdEnds);
		this.errors += worker.errors;
		if (this.firstError == null && worker.firstError != null) {
			this.firstError = worker.firstError.toString();
		}
	}

	/** Adds a run of another window (rounds of one contender), or of another JVM in this window. */
	void add(Outcome other, boolean sameWindow) {
		add(other, sameWindow, 0);
	}

	/** The same, the other run's holds counted as those of JVM {@code jvm}. */
	void add(Outcome other, boolean sameWindow, int jvm) {
		this.finishedNanos = Math.max(this.finishedNanos, other.finishedNanos);
		this.runNanos = sameWindow ? Math.max(this.runNanos, this.finishedNanos - this.startNanos)
				: this.runNanos + other.runNanos;
		this.statements = this.statements.plus(other.statements);
		this.acquireStatements.add(other.acquireStatements);
		this.failedAcquireStatements += other.failedAcquireStatements;
		this.waiterStatements += other.waiterStatements;
		this.latencies.add(other.latencies);
		this.acquireLatencies.add(other.acquireLatencies);
		this.localLatencies.add(other.localLatencies);
		this.holdStarts.addAll(other.holdStarts);
		this.holdEnds.addAll(other.holdEnds);
		for (int i = 0; i < other.holdStarts.size(); i++) {
			this.holdJvms.add(jvm);
		}
		this.errors += other.errors;
		if (this.firstError == null) {
			this.firstError = other.firstError;
		}
	}

	/** Every completed cycle, whether it reached the database or not. */
	long cycles() {
		return this.latencies.getTotalCount() + this.localLatencies.getTotalCount();
	}

	/** Completed cycles whose acquisition reached the database. */
	long databaseCycles() {
		return this.latencies.getTotalCount();
	}

	/** Completed cycles handed over inside the JVM, without a statement. */
	long localCycles() {
		return this.localLatencies.getTotalCount();
	}

	/**
	 * The statements an acquisition sends when nobody holds its key: the median of the
	 * acquisitions of this (uncontended) outcome.
	 */
	long uncontendedAcquireStatements() {
		return (this.acquireStatements.getTotalCount() == 0) ? 0 : this.acquireStatements.getValueAtPercentile(50);
	}

	/**
	 * Sets {@link #waiterStatements}: what each acquisition sent beyond an uncontended one,
	 * plus everything failed acquisitions sent. A lock handed on in the JVM without a
	 * statement counts nothing; a waiter that polls counts every poll but the one that won.
	 */
	void countWaiterStatements(long uncontendedAcquire) {
		long waiting = this.failedAcquireStatements;
		for (HistogramIterationValue value : this.acquireStatements.recordedValues()) {
			waiting += Math.max(0, value.getValueIteratedTo() - uncontendedAcquire) * value.getCountAtValueIteratedTo();
		}
		this.waiterStatements = waiting;
	}

	double seconds() {
		return this.runNanos / 1e9;
	}

	void writeTo(DataOutputStream out) throws IOException {
		out.writeLong(this.startNanos);
		out.writeLong(this.finishedNanos);
		out.writeLong(this.runNanos);
		this.statements.writeTo(out);
		out.writeLong(this.failedAcquireStatements);
		out.writeLong(this.waiterStatements);
		out.writeLong(this.errors);
		out.writeUTF((this.firstError != null) ? this.firstError : "");
		Latencies.write(this.latencies, out);
		Latencies.write(this.acquireLatencies, out);
		Latencies.write(this.localLatencies, out);
		Latencies.write(this.acquireStatements, out);
		for (LongList list : new LongList[] { this.holdStarts, this.holdEnds }) {
			out.writeInt(list.size());
			for (int i = 0; i < list.size(); i++) {
				out.writeLong(list.get(i));
			}
		}
	}

	static Outcome readFrom(DataInputStream in) throws IOException {
		Outcome outcome = new Outcome(in.readLong());
		outcome.finishedNanos = in.readLong();
		outcome.runNanos = in.readLong();
		outcome.statements = StatementCounts.readFrom(in);
		outcome.failedAcquireStatements = in.readLong();
		outcome.waiterStatements = in.readLong();
		outcome.errors = in.readLong();
		String error = in.readUTF();
		outcome.firstError = error.isEmpty() ? null : error;
		outcome.latencies.add(Latencies.read(in));
		outcome.acquireLatencies.add(Latencies.read(in));
		outcome.localLatencies.add(Latencies.read(in));
		outcome.acquireStatements.add(Latencies.read(in));
		for (LongList list : new LongList[] { outcome.holdStarts, outcome.holdEnds }) {
			for (int i = in.readInt(); i > 0; i--) {
				list.add(in.readLong());
			}
		}
		return outcome;
	}

}
