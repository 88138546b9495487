package io.github.dblock.benchmarks;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

import org.jspecify.annotations.Nullable;

/**
 * What the threads of one or more {@link CycleLoop}s did: the latency of every completed
 * cycle, when each critical section started and ended, and the failures. Written and read
 * as binary so that hot-key worker processes can hand theirs to the coordinator.
 */
final class Outcome {

	final LongList latencies = new LongList();

	final LongList holdStarts = new LongList();

	final LongList holdEnds = new LongList();

	long errors;

	@Nullable String firstError;

	void add(CycleLoop.Worker worker) {
		this.latencies.addAll(worker.latencies);
		this.holdStarts.addAll(worker.holdStarts);
		this.holdEnds.addAll(worker.holdEnds);
		this.errors += worker.errors;
		if (this.firstError == null && worker.firstError != null) {
			this.firstError = worker.firstError.toString();
		}
	}

	void add(Outcome other) {
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

	void writeTo(DataOutputStream out) throws IOException {
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
		Outcome outcome = new Outcome();
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
