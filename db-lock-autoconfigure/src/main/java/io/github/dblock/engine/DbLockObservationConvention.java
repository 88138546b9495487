package io.github.dblock.engine;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The name and key values of the observation around each acquisition call; the default is
 * {@link DefaultDbLockObservationConvention}. Declare a bean of this type to replace it.
 *
 * @since 0.1.0
 */
public interface DbLockObservationConvention extends ObservationConvention<DbLockObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof DbLockObservationContext;
	}

}
