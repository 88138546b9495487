package io.github.dblock.autoconfigure;

import java.util.Set;

import io.github.dblock.jdbc.LockRepository;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;

/**
 * Makes the {@link LockRepository} wait for database initialization, db-lock's own
 * migration included.
 *
 * @since 0.1.0
 */
public final class DbLockDependsOnDatabaseInitializationDetector
		extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {

	@Override
	protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
		return Set.of(LockRepository.class);
	}

}
