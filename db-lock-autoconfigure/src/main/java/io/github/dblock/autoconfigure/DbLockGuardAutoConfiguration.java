package io.github.dblock.autoconfigure;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;

/**
 * Registers {@link DbLockGuard}, whatever else is configured: {@code @DbLock} methods with no
 * lock engine fail start-up rather than run unlocked. Off with {@code db-lock.enabled=false}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "db-lock.enabled", matchIfMissing = true)
public final class DbLockGuardAutoConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DbLockGuard dbLockGuard(ConfigurableListableBeanFactory beanFactory) {
		return new DbLockGuard(beanFactory);
	}

}
