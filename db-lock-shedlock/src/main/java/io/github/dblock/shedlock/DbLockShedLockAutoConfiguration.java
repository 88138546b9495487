package io.github.dblock.shedlock;

import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.support.DbLockTemplate;
import net.javacrumbs.shedlock.core.LockProvider;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * ShedLock's {@link LockProvider} backed by db-lock: a {@link DbLockShedLockProvider} bean
 * named {@code dbLockShedLockProvider}, where ShedLock is on the classpath, db-lock is
 * configured (its {@link LockEngine} and {@link DbLockTemplate} beans exist) and the
 * application defines no {@code LockProvider} of its own. An application that defines one
 * keeps it: removing that bean is the switch to db-lock, and adding this module changes
 * nothing until then.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnClass(LockProvider.class)
@ConditionalOnBean({ LockEngine.class, DbLockTemplate.class })
public final class DbLockShedLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockProvider.class)
	DbLockShedLockProvider dbLockShedLockProvider(LockEngine engine, DbLockTemplate template) {
		return new DbLockShedLockProvider(engine, template);
	}

}
