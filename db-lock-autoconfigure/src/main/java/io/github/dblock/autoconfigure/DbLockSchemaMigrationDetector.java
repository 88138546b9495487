package io.github.dblock.autoconfigure;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.core.Ordered;

/**
 * Marks {@link DbLockSchemaMigration} as a database initializer, so that beans depending
 * on database initialization are created after the lock table exists. Ordered last: the
 * application's own Flyway or Liquibase runs first and finds the schema as it left it
 * (Flyway refuses a non-empty schema without its history table).
 *
 * @since 0.1.0
 */
public final class DbLockSchemaMigrationDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
		return Set.of(DbLockSchemaMigration.class);
	}

}
