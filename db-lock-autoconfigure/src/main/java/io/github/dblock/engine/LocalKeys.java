package io.github.dblock.engine;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The keys this JVM's threads want or hold, each with its gate; an entry lives while a
 * thread or a hold uses it.
 */
final class LocalKeys {

	private final ConcurrentHashMap<String, LocalKey> keys = new ConcurrentHashMap<>();

	/** The key's entry, counting one more user. */
	LocalKey enter(String key) {
		return this.keys.compute(key, (k, local) -> {
			LocalKey entered = (local != null) ? local : new LocalKey(k);
			entered.users++;
			return entered;
		});
	}

	/** Counts one user less; the entry goes with the last. */
	/** The keys in use now: held, awaited or being taken. */
	java.util.Collection<LocalKey> inUse() {
		return this.keys.values();
	}

	void exit(LocalKey local) {
		this.keys.computeIfPresent(local.key, (k, current) -> (current == local && --current.users == 0) ? null : current);
	}

}
