package io.github.dblock.actuate;

/**
 * Turns a stored lock key into the {@code name} tag of db-lock's meters: it must take few
 * distinct values (one per kind of lock, never one per order id), as every value is a
 * time series of its own. {@link DbLockMetrics} bounds them anyway: past its limit of
 * names, a new one is tagged {@value DbLockMetrics#OTHER}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface LockNameTag {

	/**
	 * The tag of a key.
	 * @param key the stored key, {@code [key-prefix:]name[:key]} for a {@code @DbLock}
	 * method
	 * @return the tag value
	 */
	String tag(String key);

	/**
	 * The default: the key without the key prefix, up to its first colon. For a
	 * {@code @DbLock} method that is the annotation's name (or {@code Class.method}), its
	 * key left out; for a {@link io.github.dblock.support.DbLockTemplate} key such as
	 * {@code "order:" + id}, the part before the first colon. A key with no colon is its
	 * own tag.
	 * @param keyPrefix {@code db-lock.key-prefix}; empty for none
	 * @return the tag
	 */
	static LockNameTag firstSegment(String keyPrefix) {
		String prefix = keyPrefix.isEmpty() ? "" : keyPrefix + ":";
		return (key) -> {
			String name = (!prefix.isEmpty() && key.startsWith(prefix)) ? key.substring(prefix.length()) : key;
			int colon = name.indexOf(':');
			return (colon > 0) ? name.substring(0, colon) : name;
		};
	}

}
