package io.github.dblock.autoconfigure.metrics;

import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockProperties;
import io.github.dblock.actuate.DbLockMetrics;
import io.github.dblock.actuate.LockNameTag;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.maintenance.LockReaper;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * db-lock's Micrometer meters ({@link DbLockMetrics}), where Micrometer is on the classpath;
 * off with {@code db-lock.metrics.enabled=false}. The meters are a {@link MeterBinder} that
 * Spring Boot's metrics binds to the application's registries.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(LockEngine.class)
@ConditionalOnBooleanProperty(name = "db-lock.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbLockMetricsProperties.class)
public final class DbLockMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LockNameTag dbLockNameTag(ObjectProvider<DbLockProperties> properties) {
		// an engine of the application's own may come without db-lock's properties
		DbLockProperties configured = properties.getIfAvailable();
		return LockNameTag.firstSegment((configured != null) ? configured.getKeyPrefix() : "");
	}

	@Bean
	@ConditionalOnMissingBean
	DbLockMetrics dbLockMetrics(LockEngine engine, ObjectProvider<LockReaper> reaper, LockNameTag nameTag,
			DbLockMetricsProperties properties) {
		DbLockMetrics metrics = new DbLockMetrics(engine, nameTag, properties.getMaxNames());
		engine.addListener(metrics);
		reaper.ifAvailable((available) -> available.addListener(metrics));
		return metrics;
	}

}
