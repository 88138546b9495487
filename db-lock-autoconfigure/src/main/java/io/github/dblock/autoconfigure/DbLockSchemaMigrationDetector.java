package io.github.dblock.autoconfigure;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;

/**
 * Marks {@link DbLockSchemaMigration} as a database initializer, so that beans depending
 * on database initialization are created after the lock table exists.
 */
public final class DbLockSchemaMigrationDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

	@Override
	protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
		return Set.of(DbLockSchemaMigration.class);
	}

}
