package io.github.dblock.autoconfigure;

import io.github.dblock.integration.DbLockRegistry;
import io.github.dblock.support.DbLockTemplate;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Auto-configuration of Spring Integration on db-lock: a {@link DbLockRegistry} as the
 * application's {@link LockRegistry}, when Spring Integration is on the class path and
 * db-lock is configured, unless the application defines a {@code LockRegistry} of its own.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnBean(DbLockTemplate.class)
public final class DbLockIntegrationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockRegistry.class)
	DbLockRegistry dbLockRegistry(DbLockTemplate template) {
		return new DbLockRegistry(template);
	}

}
