package io.github.dblock.nodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockConfigurationException;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.OwnPostgreSql;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * PostgreSQL with a streaming standby of the test's own, failed over: the primary killed
 * ({@code SIGKILL}) and the standby promoted. With synchronous replication every acquisition
 * that returned is on the new primary and tokens keep increasing; with asynchronous
 * replication what the standby had not received is lost (shown with its streaming stopped),
 * which db-lock warns of at start-up. A {@code DataSource} on a standby fails start-up.
 */
@ExtendWith(OutputCaptureExtension.class)
class PostgreSqlFailoverTests {

	private static final Duration LEASE = Duration.ofMinutes(10);

	@Test
	void withASynchronousStandbyEveryAcquisitionThatReturnedSurvivesAFailover() throws Exception {
		try (OwnPostgreSql primary = OwnPostgreSql.start(); OwnPostgreSql standby = primary.startStandby(true)) {
			Map<String, Lease> acquired = new ConcurrentHashMap<>();
			AtomicBoolean stop = new AtomicBoolean();
			try (HikariDataSource onPrimary = dataSource(primary)) {
				JdbcLockRepository locks = repository(onPrimary, true);
				// acquisitions run on while the primary is killed under them
				CompletableFuture<Integer> failed = CompletableFuture.supplyAsync(() -> {
					int failures = 0;
					for (int i = 0; !stop.get(); i++) {
						String key = "failover-" + i;
						try {
							locks.tryAcquire(key, "old-" + i, LEASE).ifPresent((lease) -> acquired.put(key, lease));
						}
						catch (RuntimeException ex) {
							failures++;
						}
					}
					return failures;
				});
				while (acquired.size() < 200) {
					Thread.onSpinWait();
				}
				primary.kill();
				stop.set(true);
				failed.get();
			}
			standby.promote();
			try (HikariDataSource onNewPrimary = dataSource(standby)) {
				JdbcLockRepository locks = repository(onNewPrimary, false);
				int lost = 0;
				long highest = 0;
				for (Map.Entry<String, Lease> held : acquired.entrySet()) {
					highest = Math.max(highest, held.getValue().token());
					if (locks.tryAcquire(held.getKey(), "new", LEASE).isPresent()) {
						lost++;
					}
				}
				System.out.println("synchronous failover: " + acquired.size() + " acquisitions returned before the kill, "
						+ lost + " missing on the promoted standby");
				assertThat(lost).isZero();
				Optional<Lease> next = locks.tryAcquire("failover-after", "new", LEASE);
				assertThat(next).isPresent();
				assertThat(next.get().token()).isGreaterThan(highest);
			}
		}
	}

	@Test
	void withAnAsynchronousStandbyAFailoverLosesWhatItHadNotReceived(CapturedOutput output) throws Exception {
		try (OwnPostgreSql primary = OwnPostgreSql.start(); OwnPostgreSql standby = primary.startStandby(false)) {
			List<Lease> acquired = new ArrayList<>();
			try (HikariDataSource onPrimary = dataSource(primary)) {
				// db-lock says so at start-up
				contextOn(primary).run((context) -> assertThat(context).hasNotFailed());
				assertThat(output).contains("streams to 1 standby(s) asynchronously");
				JdbcLockRepository locks = repository(onPrimary, true);
				acquired.add(locks.tryAcquire("async-before", "old", LEASE).orElseThrow());
				awaitReplayed(primary);
				// the standby falls behind, as a slow or cut network makes it
				standby.stopStreaming();
				for (int i = 0; i < 50; i++) {
					acquired.add(locks.tryAcquire("async-" + i, "old", LEASE).orElseThrow());
				}
				primary.kill();
			}
			standby.promote();
			try (HikariDataSource onNewPrimary = dataSource(standby)) {
				JdbcLockRepository locks = repository(onNewPrimary, false);
				int lost = 0;
				int smallerTokens = 0;
				long highest = acquired.stream().mapToLong(Lease::token).max().orElseThrow();
				for (Lease held : acquired) {
					Optional<Lease> again = locks.tryAcquire(held.key(), "new", LEASE);
					if (again.isPresent()) {
						lost++;
						if (again.get().token() <= highest) {
							smallerTokens++;
						}
					}
				}
				System.out.println("asynchronous failover: " + acquired.size() + " acquisitions, " + lost
						+ " missing on the promoted standby, " + smallerTokens + " of them given again with a token "
						+ "not above the old holders'");
				// the one it had received survived; the others were given to a second holder
				assertThat(locks.tryAcquire("async-before", "new", LEASE)).isEmpty();
				assertThat(lost).isEqualTo(50);
			}
		}
	}

	@Test
	void aDataSourceOnAStandbyFailsStartUp() throws Exception {
		try (OwnPostgreSql primary = OwnPostgreSql.start(); OwnPostgreSql standby = primary.startStandby(false)) {
			contextOn(standby).run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(DbLockConfigurationException.class)
				.hasMessageContaining("cannot hold locks: the server is a standby in recovery"));
		}
	}

	private static ApplicationContextRunner contextOn(OwnPostgreSql server) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + server.url(), "spring.datasource.username=" + server.user());
	}

	/** Waits until the standby has replayed everything the primary committed. */
	private static void awaitReplayed(OwnPostgreSql primary) throws Exception {
		try (HikariDataSource dataSource = dataSource(primary)) {
			org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(dataSource);
			NodeSupport.awaitSignal(jdbc, "SELECT COUNT(*) FROM pg_stat_replication WHERE replay_lsn >= pg_current_wal_lsn()",
					1);
		}
	}

	private static HikariDataSource dataSource(OwnPostgreSql server) {
		return NodeSupport.dataSource(server.url(), server.user(), "", 4);
	}

	private static JdbcLockRepository repository(HikariDataSource dataSource, boolean migrate) {
		SqlDialect dialect = SqlDialects.detect(dataSource, TestDatabase.TABLE);
		if (migrate) {
			new DbLockSchemaMigration(dataSource, dialect).afterPropertiesSet();
		}
		return new JdbcLockRepository(dataSource, dialect);
	}

}
