package io.github.dblock.engine;

import io.github.dblock.DbLockMode;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one acquisition call knows: the key and mode asked for, and, once
 * the call ends, its {@linkplain #getOutcome() outcome}. Read by a
 * {@link DbLockObservationConvention}.
 *
 * @since 0.1.0
 */
public class DbLockObservationContext extends Observation.Context {

	/** The outcome of a call that acquired the key. */
	public static final String ACQUIRED = "acquired";

	private final String key;

	private final DbLockMode mode;

	private @Nullable String outcome;

	/**
	 * Creates the context of one call.
	 * @param key the stored key
	 * @param mode how it is asked for
	 */
	public DbLockObservationContext(String key, DbLockMode mode) {
		this.key = key;
		this.mode = mode;
	}

	/**
	 * The stored key.
	 * @return the key
	 */
	public String getKey() {
		return this.key;
	}

	/**
	 * How the key is asked for.
	 * @return the mode
	 */
	public DbLockMode getMode() {
		return this.mode;
	}

	/**
	 * How the call ended: {@value #ACQUIRED}, {@code timed_out} or {@code failed}, lowercase
	 * as in the {@code db.lock.acquire} meter; {@code null} while it runs.
	 * @return the outcome, or {@code null}
	 */
	public @Nullable String getOutcome() {
		return this.outcome;
	}

	void setOutcome(String outcome) {
		this.outcome = outcome;
	}

}
