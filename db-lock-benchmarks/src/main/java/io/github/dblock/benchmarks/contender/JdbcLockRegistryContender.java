package io.github.dblock.benchmarks.contender;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@link JdbcLockRegistry} over a {@link DefaultLockRepository},
 * with its defaults (100 ms between tries) and its own table, created from the schema
 * Spring Integration ships for the database ({@code schema-mysql.sql} or
 * {@code schema-postgresql.sql}).
 */
final class JdbcLockRegistryContender extends AcquireReleaseContender<Lock> {

	/** Table prefix instead of {@code INT_}: the table is {@code BENCH_LOCK}. */
	private static final String PREFIX = "BENCH_";

	private static final String SCHEMA = "/org/springframework/integration/jdbc/schema-%s.sql";

	private final DefaultLockRepository repository;

	private final JdbcLockRegistry registry;

	JdbcLockRegistryContender(DataSource dataSource, boolean prepare) {
		if (prepare) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			boolean postgresql = Databases.postgresql(dataSource);
			jdbc.execute(lockTableDdl(SCHEMA.formatted(postgresql ? "postgresql" : "mysql")));
			// what crashed runs left (the registry writes its own clock's time: a day's margin)
			jdbc.update("DELETE FROM " + PREFIX + "LOCK WHERE CREATED_DATE < "
					+ (postgresql ? "LOCALTIMESTAMP - INTERVAL '1 day'" : "NOW(6) - INTERVAL 1 DAY"));
		}
		this.repository = new DefaultLockRepository(dataSource);
		this.repository.setPrefix(PREFIX);
		this.repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
		this.repository.afterPropertiesSet();
		this.repository.afterSingletonsInstantiated();
		this.repository.start();
		this.registry = new JdbcLockRegistry(this.repository);
	}

	@Override
	@Nullable Lock acquire(String key) throws InterruptedException {
		Lock lock = this.registry.obtain(key);
		return lock.tryLock(LockTimes.WAIT_MS, TimeUnit.MILLISECONDS) ? lock : null;
	}

	@Override
	void release(String key, Lock held) {
		held.unlock();
	}

	@Override
	public void close() {
		this.repository.stop();
		this.repository.close();
	}

	/** The lock table's DDL as Spring Integration ships it, under the benchmark's prefix. */
	private static String lockTableDdl(String schemaResource) {
		String schema;
		try (InputStream in = JdbcLockRegistry.class.getResourceAsStream(schemaResource)) {
			if (in == null) {
				throw new IllegalStateException("Spring Integration's " + schemaResource + " is not on the class path");
			}
			schema = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not read " + schemaResource, ex);
		}
		Matcher ddl = Pattern.compile("CREATE TABLE INT_LOCK\\b[^;]*").matcher(schema);
		if (!ddl.find()) {
			throw new IllegalStateException("No INT_LOCK table in " + schemaResource);
		}
		return ddl.group().replace("CREATE TABLE INT_", "CREATE TABLE IF NOT EXISTS " + PREFIX);
	}

}
