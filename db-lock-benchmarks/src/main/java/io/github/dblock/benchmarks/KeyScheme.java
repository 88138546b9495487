package io.github.dblock.benchmarks;

/** Which key a thread locks in a cycle. */
@FunctionalInterface
interface KeyScheme {

	String key(int thread, long cycle);

	/** Every thread, every cycle: the same key. */
	static KeyScheme same(String key) {
		return (thread, cycle) -> key;
	}

	/** A key never used before in each cycle, like order ids. */
	static KeyScheme newEachCycle(String prefix) {
		return (thread, cycle) -> prefix + "-" + thread + "-" + cycle;
	}

	/** One key per thread, kept for every cycle. */
	static KeyScheme perThread(String prefix) {
		return (thread, cycle) -> prefix + "-" + thread;
	}

}
