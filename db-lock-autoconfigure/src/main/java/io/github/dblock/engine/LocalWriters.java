package io.github.dblock.engine;

import java.util.concurrent.Semaphore;

/** The writers of this JVM that want one key. */
final class LocalWriters extends LocalKeys.Entry {

	/** One writer at a time asks the database or holds the key; fair, so that they take turns. */
	final Semaphore permit = new Semaphore(1, true);

	/**
	 * When this JVM's current turn at the key began ({@link System#nanoTime()}), 0 for no
	 * turn; changed only by the writer that holds the permit.
	 */
	volatile long turnStart;

	/** Before when the writer that takes the permit next does not ask the database; 0 for no holding back. */
	volatile long holdBackUntil;

	LocalWriters(String key) {
		super(key);
	}

}
