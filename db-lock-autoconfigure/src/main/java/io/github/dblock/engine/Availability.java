package io.github.dblock.engine;

import java.util.Optional;
import java.util.function.Supplier;

import io.github.dblock.DbLockException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Whether a mode can be used with the database: asked of the database once, on first use
 * (or at start-up), and remembered.
 */
final class Availability {

	private final String mode;

	private final Supplier<@Nullable String> unavailable;

	private volatile @Nullable Optional<String> reason;

	/**
	 * @param mode the mode's name in messages
	 * @param unavailable asks the database why the mode cannot be used; {@code null} if it can
	 */
	Availability(String mode, Supplier<@Nullable String> unavailable) {
		this.mode = mode;
		this.unavailable = unavailable;
	}

	/** Throws if the mode cannot be used, asking the database the first time. */
	void check(String key) {
		Optional<String> known = this.reason;
		if (known == null) {
			try {
				known = now();
			}
			catch (DataAccessException ex) {
				throw new DbLockException("Could not acquire lock '" + key + "' in the " + this.mode
						+ " mode: the database failed (" + ex.getMessage() + ")", ex);
			}
		}
		if (known.isPresent()) {
			throw new DbLockException("Could not acquire lock '" + key + "' in the " + this.mode + " mode: "
					+ known.get() + ". Use the lease mode (the default) instead");
		}
	}

	/** Asks the database now. */
	Optional<String> now() {
		Optional<String> known = Optional.ofNullable(this.unavailable.get());
		this.reason = known;
		return known;
	}

}
