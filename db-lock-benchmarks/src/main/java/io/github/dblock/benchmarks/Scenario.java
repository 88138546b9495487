package io.github.dblock.benchmarks;

import java.util.List;
import java.util.function.Function;

/** The four scenarios, and a fifth. */
enum Scenario {

	SINGLE_KEY(1, "one thread, one key", 1, (prefix) -> KeyScheme.same(prefix + "-one")),

	NEW_KEY(2, "one thread, a new key every cycle", 1, (prefix) -> KeyScheme.newEachCycle(prefix + "-order")),

	HOT_KEY(3, "hot key, each holder holds it 1 ms", 8, (prefix) -> KeyScheme.same(prefix + "-hot")),

	DISTINCT_KEYS(4, "16 threads, a key each", 16, (prefix) -> KeyScheme.perThread(prefix + "-own")),

	/** Not one of the issue's: scenario 2 on 16 threads, so that every cycle goes to the database. */
	NEW_KEYS(5, "16 threads, a new key every cycle", 16, (prefix) -> KeyScheme.newEachCycle(prefix + "-orders"));

	/** The scenarios measured as cycles per second, every contender taking turns. */
	static final List<Scenario> THROUGHPUT = List.of(SINGLE_KEY, NEW_KEY, DISTINCT_KEYS, NEW_KEYS);

	final int number;

	final String title;

	final int threads;

	private final Function<String, KeyScheme> keys;

	Scenario(int number, String title, int threads, Function<String, KeyScheme> keys) {
		this.number = number;
		this.title = title;
		this.threads = threads;
		this.keys = keys;
	}

	/** The scenario's keys, all starting with a prefix so that runs and warm-ups do not meet. */
	KeyScheme keys(String prefix) {
		return this.keys.apply(prefix);
	}

	String label() {
		return this.number + ": " + this.title;
	}

}
