package io.github.dblock.engine;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The keys this JVM's threads want or hold in one mode, each with the mode's entry (its
 * gate, its holder); an entry lives while a thread or a hold uses it.
 *
 * @param <E> the mode's entry
 */
final class LocalKeys<E extends LocalKeys.Entry> {

	private final ConcurrentHashMap<String, E> keys = new ConcurrentHashMap<>();

	private final Function<String, E> entries;

	/**
	 * @param entries makes the entry of a key that no thread uses yet
	 */
	LocalKeys(Function<String, E> entries) {
		this.entries = entries;
	}

	/** The key's entry, counting one more user. */
	E enter(String key) {
		return this.keys.compute(key, (k, local) -> {
			E entered = (local != null) ? local : this.entries.apply(k);
			entered.users++;
			return entered;
		});
	}

	/** Counts one user less; the entry goes with the last. */
	void exit(E local) {
		this.keys.computeIfPresent(local.key, (k, current) -> (current == local && --current.users == 0) ? null : current);
	}

	/** The key's entry if a thread or a hold uses it now, counting no user. */
	@Nullable E find(String key) {
		return this.keys.get(key);
	}

	/** The keys in use now: held, awaited or being taken. */
	Collection<E> inUse() {
		return this.keys.values();
	}

	/** One key's entry: what the threads of this JVM that use it share. */
	abstract static class Entry {

		final String key;

		/** Threads and holds using this entry; changed only inside the map. */
		int users;

		Entry(String key) {
			this.key = key;
		}

	}

}
