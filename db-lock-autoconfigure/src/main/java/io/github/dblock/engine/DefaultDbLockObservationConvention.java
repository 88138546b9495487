package io.github.dblock.engine;

import java.util.Locale;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

/**
 * The default {@link DbLockObservationConvention}: the observation {@value #NAME} (contextual
 * name {@code "db-lock acquire"}), with the low-cardinality key values {@code db.lock.mode}
 * and {@code db.lock.outcome} and the high-cardinality {@code db.lock.key}. The name is not
 * {@code db.lock.acquire}, the timer db-lock's own meters record, because the meters an
 * observation handler makes carry other tags.
 *
 * @since 0.1.0
 */
public class DefaultDbLockObservationConvention implements DbLockObservationConvention {

	/** The observation's name. */
	public static final String NAME = "db.lock.acquisition";

	/** The instance used where no other convention is given. */
	public static final DefaultDbLockObservationConvention INSTANCE = new DefaultDbLockObservationConvention();

	private static final String UNKNOWN = "unknown";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(DbLockObservationContext context) {
		return "db-lock acquire";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(DbLockObservationContext context) {
		String outcome = context.getOutcome();
		return KeyValues.of(KeyValue.of("db.lock.mode", context.getMode().name().toLowerCase(Locale.ROOT)),
				KeyValue.of("db.lock.outcome", (outcome != null) ? outcome : UNKNOWN));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(DbLockObservationContext context) {
		return KeyValues.of(KeyValue.of("db.lock.key", context.getKey()));
	}

}
