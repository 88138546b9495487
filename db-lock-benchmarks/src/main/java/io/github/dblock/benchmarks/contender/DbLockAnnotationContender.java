package io.github.dblock.benchmarks.contender;

import java.util.Map;

import javax.sql.DataSource;

import io.github.dblock.LockAcquisitionException;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

/**
 * db-lock through {@code @DbLock}: a Spring context with db-lock's auto-configuration
 * proxies {@link LockedSection}, so each cycle pays what an application pays: the proxy,
 * the advisor, the key's SpEL evaluation and the template.
 */
final class DbLockAnnotationContender implements LockContender {

	private final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();

	private final LockedSection section;

	DbLockAnnotationContender(DataSource dataSource, boolean prepare) {
		if (prepare) {
			// creates and empties the table, as the template contender would
			new DbLockTemplateContender(dataSource, true).close();
		}
		this.context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("bench", Map.of("db-lock.table-name", DbLockTemplateContender.TABLE,
					"db-lock.schema.migrate", "false", "db-lock.default-wait", LockTimes.WAIT.toString(),
					"db-lock.default-lease", LockTimes.LEASE.toString())));
		this.context.registerBean(DataSource.class, () -> dataSource);
		this.context.register(DbLockConfiguration.class, LockedSection.class);
		this.context.refresh();
		this.section = this.context.getBean(LockedSection.class);
	}

	@Override
	public boolean runLocked(String key, Runnable criticalSection) {
		try {
			this.section.run(key, criticalSection);
			return true;
		}
		catch (LockAcquisitionException ex) {
			return false;
		}
	}

	@Override
	public void close() {
		this.context.close();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(DbLockAutoConfiguration.class)
	static class DbLockConfiguration {

	}

}
