package io.github.dblock.autoconfigure.health;

import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.actuate.DbLockHealthIndicator;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code dbLock} health indicator ({@link DbLockHealthIndicator}), where Spring Boot's
 * health support ({@code spring-boot-health}) is on the classpath; off with
 * {@code management.health.db-lock.enabled=false}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean({ LockRepository.class, SqlDialect.class })
public final class DbLockHealthAutoConfiguration {

	/** Apart, so that its condition is read only where the health support is present. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnEnabledHealthIndicator("db-lock")
	static class Indicator {

		@Bean
		@ConditionalOnMissingBean(name = "dbLockHealthIndicator")
		DbLockHealthIndicator dbLockHealthIndicator(LockRepository repository, SqlDialect dialect,
				ObjectProvider<LockEngine> engine) {
			return new DbLockHealthIndicator(repository, dialect, engine.getIfAvailable());
		}

	}

}
