package io.github.dblock.autoconfigure.endpoint;

import java.util.List;

import io.github.dblock.actuate.DbLockEndpoint;
import io.github.dblock.actuate.DbLockLeadersEndpoint;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.autoconfigure.leader.DbLockLeaderAutoConfiguration;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.LockHistoryRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.maintenance.LockHistory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code dblock} actuator endpoint ({@link DbLockEndpoint}), and where the leader
 * election runs the {@code dblockleaders} one ({@link DbLockLeadersEndpoint}), where Spring Boot's
 * actuator ({@code spring-boot-actuator-autoconfigure}) is on the classpath, when the
 * endpoint is available: its access not {@code management.endpoint.dblock.access=none},
 * and exposed ({@code management.endpoints.web.exposure.include=dblock}, or over JMX).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = { DbLockAutoConfiguration.class, DbLockLeaderAutoConfiguration.class })
@ConditionalOnClass(value = Endpoint.class,
		name = "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint")
@ConditionalOnBean({ LockRepository.class, LockEngine.class })
@EnableConfigurationProperties(DbLockEndpointProperties.class)
public final class DbLockEndpointAutoConfiguration {

	/** The leaders' endpoint, where the leader election runs. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnAvailableEndpoint(DbLockLeadersEndpoint.class)
	@ConditionalOnBean(DbLockLeaders.class)
	static class Leaders {

		@Bean
		@ConditionalOnMissingBean
		DbLockLeadersEndpoint dbLockLeadersEndpoint(DbLockLeaders leaders) {
			return new DbLockLeadersEndpoint(leaders);
		}

	}

	/** Apart, so that its condition is read only where the actuator is present. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnAvailableEndpoint(DbLockEndpoint.class)
	static class Available {

		@Bean
		@ConditionalOnMissingBean
		DbLockEndpoint dbLockEndpoint(LockRepository repository, LockEngine engine,
				DbLockEndpointProperties properties, ObjectProvider<DbLockSchemaMigration> migration,
				ObjectProvider<LockHistory> history, ObjectProvider<LockHistoryRepository> historyRepository) {
			DbLockSchemaMigration schema = migration.getIfAvailable();
			// the log's repository exists for the recovery job too: listed only where the log is on
			LockHistoryRepository log = (history.getIfAvailable() != null) ? historyRepository.getIfAvailable() : null;
			if (schema == null) {
				return new DbLockEndpoint(repository, engine, properties.getMaxRows(), List::of, log);
			}
			return new DbLockEndpoint(repository, engine, properties.getMaxRows(),
					() -> schema.migrations()
						.stream()
						.map((step) -> new DbLockEndpoint.Migration(String.valueOf(step.version()),
								step.description(), step.state(), step.installedOn()))
						.toList(),
					log);
		}

	}

}
