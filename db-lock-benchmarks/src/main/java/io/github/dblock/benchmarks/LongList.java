package io.github.dblock.benchmarks;

import java.util.Arrays;

/** A growable list of primitive longs: the hot key's hold times, which need their order, not only their spread. */
final class LongList {

	private long[] values = new long[1024];

	private int size;

	void add(long value) {
		if (this.size == this.values.length) {
			this.values = Arrays.copyOf(this.values, this.size * 2);
		}
		this.values[this.size++] = value;
	}

	void addAll(LongList other) {
		for (int i = 0; i < other.size; i++) {
			add(other.values[i]);
		}
	}

	long get(int index) {
		return this.values[index];
	}

	int size() {
		return this.size;
	}

	long[] toArray() {
		return Arrays.copyOf(this.values, this.size);
	}

}
