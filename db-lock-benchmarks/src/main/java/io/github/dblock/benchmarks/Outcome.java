package io.github.dblock.benchmarks;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * What the threads of one or more {@link CycleLoop}s did: the latency of every completed
 * cycle, when each critical section started and ended, the failures, how long the loops
 * ran and the statements the server counted. Written and read as binary so that hot-key
 * worker processes can hand theirs to the coordinator.
 */
final class Outcome {

	/** When the loops started, as {@link System#nanoTime()}. */
	final long startNanos;

	/** When the last thread finished its last cycle. */
	long finishedNanos;

	/** Time the loops ran, summed over merged runs of separate windows. */
	long runNanos;

	StatementCounts statements = StatementCounts.ZERO;

	final LongList latencies = new LongList();

	final LongList holdStarts = new LongList();

	final LongList holdEnds = new LongList();

	/** Per completed cycle, the statements its thread sent before holding (counted by {@link StatementTally}). */
	final LongList acquireStatements = new LongList();

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
		this.acquireStatements.addAll(worker.acquireStatements);
		this.failedAcquireStatements += worker.failedStatements;
		this.latencies.addAll(worker.latencies);
		this.holdStarts.addAll(worker.holdStarts);
		this.holdEnds.addAll(worker.holdEnds);
		this.errors += worker.errors;
		if (this.firstError == null && worker.firstError != null) {
			this.firstError = worker.firstError.toString();
		}
	}

	/** Adds a run of another window (rounds of one contender), or of another JVM in this window. */
	void add(Outcome other, boolean sameWindow) {
		this.finishedNanos = Math.max(this.finishedNanos, other.finishedNanos);
		this.runNanos = sameWindow ? Math.max(this.runNanos, this.finishedNanos - this.startNanos)
				: this.runNanos + other.runNanos;
		this.statements = this.statements.plus(other.statements);
		this.acquireStatements.addAll(other.acquireStatements);
		this.failedAcquireStatements += other.failedAcquireStatements;
		this.waiterStatements += other.waiterStatements;
		this.latencies.addAll(other.latencies);
		this.holdStarts.addAll(other.holdStarts);
		this.holdEnds.addAll(other.holdEnds);
		this.errors += other.errors;
		if (this.firstError == null) {
			this.firstError = other.firstError;
		}
	}

	long cycles() {
		return this.latencies.size();
	}

	/**
	 * The statements an acquisition sends when nobody holds its key: the median of the
	 * acquisitions of this (uncontended) outcome.
	 */
	long uncontendedAcquireStatements() {
		long[] sorted = this.acquireStatements.toArray();
		Arrays.sort(sorted);
		return (sorted.length == 0) ? 0 : sorted[sorted.length / 2];
	}

	/**
	 * Sets {@link #waiterStatements}: what each acquisition sent beyond an uncontended one,
	 * plus everything failed acquisitions sent. A lock handed on in the JVM without a
	 * statement counts nothing; a waiter that polls counts every poll but the one that won.
	 */
	void countWaiterStatements(long uncontendedAcquire) {
		long waiting = this.failedAcquireStatements;
		for (int i = 0; i < this.acquireStatements.size(); i++) {
			waiting += Math.max(0, this.acquireStatements.get(i) - uncontendedAcquire);
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
		for (LongList list : new LongList[] { this.latencies, this.holdStarts, this.holdEnds }) {
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
		for (LongList list : new LongList[] { outcome.latencies, outcome.holdStarts, outcome.holdEnds }) {
			for (int i = in.readInt(); i > 0; i--) {
				list.add(in.readLong());
			}
		}
		return outcome;
	}

}
