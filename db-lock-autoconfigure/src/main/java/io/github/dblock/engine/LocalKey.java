package io.github.dblock.engine;

import org.jspecify.annotations.Nullable;

/**
 * The threads of this JVM that want one key: the gate admits one at a time to the key,
 * and {@link #hold} is the local acquisition holding it.
 */
final class LocalKey extends LocalKeys.Entry {

	final LocalGate<HeldLease> gate = new LocalGate<>();

	/** The hold that owns the gate, while one does. */
	volatile @Nullable Hold hold;

	/**
	 * The thread asking the database for the key, between attempts or holding back after a
	 * cede: woken at shutdown, and by a release another owner told of between attempts.
	 */
	volatile @Nullable Thread polling;

	/** How many releases of the key by other owners this JVM was told of; written by one thread. */
	volatile int wakeUps;

	LocalKey(String key) {
		super(key);
	}

}
