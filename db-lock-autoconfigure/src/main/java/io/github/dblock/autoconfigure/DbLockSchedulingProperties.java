package io.github.dblock.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * Configuration properties of the scheduled jobs run once per slot
 * ({@link io.github.dblock.scheduling.OncePerSlot}).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("db-lock.scheduling")
public class DbLockSchedulingProperties {

	/** The default of {@link #getRetention()}. */
	static final Duration DEFAULT_RETENTION = Duration.ofDays(1);

	/** The default of {@link #getOrder()}. */
	static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 150;

	/**
	 * How long a task's claimed slots are kept before its latest claimed one: the claim
	 * that wins a slot deletes the task's older slots. Whatever this says, the slots of the
	 * last two gaps between the schedule's fire times are kept, so that an instance whose
	 * call maps to the previous slot never finds it deleted.
	 */
	private Duration retention = DEFAULT_RETENTION;

	/**
	 * Order of the @OncePerSlot advice among the advisors of a bean. The default runs it
	 * outside @DbLock and @Transactional, so that a call whose slot is claimed elsewhere
	 * takes no lock and begins no transaction, and inside @LeaderOnly, so that an instance
	 * that does not lead claims no slot.
	 */
	private int order = DEFAULT_ORDER;

	public Duration getRetention() {
		return this.retention;
	}

	public void setRetention(Duration retention) {
		this.retention = retention;
	}

	public int getOrder() {
		return this.order;
	}

	public void setOrder(int order) {
		this.order = order;
	}

}
