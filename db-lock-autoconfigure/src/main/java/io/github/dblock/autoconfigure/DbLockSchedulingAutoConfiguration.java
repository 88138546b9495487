package io.github.dblock.autoconfigure;

import java.time.Duration;

import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.JdbcSlotRepository;
import io.github.dblock.jdbc.LockConnections;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.SlotRepository;
import io.github.dblock.scheduling.OncePerSlotAdvisor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the scheduled jobs run once per slot
 * ({@link io.github.dblock.scheduling.OncePerSlot}): the slots' storage, on the lock
 * repository's connections, and the advisor that claims a slot before each run.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.scheduling.annotation.Scheduled")
@ConditionalOnBean(LockRepository.class)
@ConditionalOnBooleanProperty(name = "db-lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbLockSchedulingProperties.class)
public final class DbLockSchedulingAutoConfiguration {

	/** The slots' table beside the lock table, on the lock repository's connections if it is db-lock's JDBC one. */
	@Bean
	@ConditionalOnMissingBean
	SlotRepository dbLockSlotRepository(LockRepository repository, ObjectProvider<LockConnections> connections) {
		return new JdbcSlotRepository((repository instanceof JdbcLockRepository jdbc) ? jdbc.connections()
				: connections.getObject());
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static OncePerSlotAdvisor dbLockOncePerSlotAdvisor(ObjectProvider<SlotRepository> slots,
			ConfigurableListableBeanFactory beanFactory, Environment environment) {
		// bound from the environment: advisors are created before configuration properties beans may be
		Binder binder = Binder.get(environment);
		Duration retention = binder.bind("db-lock.scheduling.retention", Duration.class)
			.orElse(DbLockSchedulingProperties.DEFAULT_RETENTION);
		if (retention.isNegative() || retention.isZero()) {
			throw new DbLockConfigurationException("db-lock.scheduling.retention must be positive, got " + retention
					+ ".", "Set db-lock.scheduling.retention to how long a task's claimed slots are kept, e.g. 1d.");
		}
		int order = binder.bind("db-lock.scheduling.order", Integer.class).orElse(DbLockSchedulingProperties.DEFAULT_ORDER);
		String prefix = environment.getProperty("db-lock.key-prefix", "");
		return new OncePerSlotAdvisor(slots::getObject, new EmbeddedValueResolver(beanFactory),
				prefix.isEmpty() ? "" : prefix + ":", JdbcLockRepository.MAX_KEY_LENGTH, retention, order);
	}

	@Bean
	static DbLockSlotTableCheck dbLockSlotTableCheck(ConfigurableListableBeanFactory beanFactory) {
		return new DbLockSlotTableCheck(beanFactory);
	}

}
