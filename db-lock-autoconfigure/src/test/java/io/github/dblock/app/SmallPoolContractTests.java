package io.github.dblock.app;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.autoconfigure.DbLockConnectionPool;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DbLock} called inside outer transactions by more threads than the pool has
 * connections (a pool of 4, 16 threads): the outer transactions can hold every connection
 * while each lock statement needs one more. Sharing the pool, no call hangs and a lock
 * call that gets no connection fails with a message that says so; with
 * {@code db-lock.pool.size}, lock statements have connections of their own and every call
 * that began its transaction completes.
 */
abstract class SmallPoolContractTests {

	private static final int THREADS = 16;

	private static final int CALLS = 3;

	protected abstract TestDatabase database();

	@Test
	void sharingTheApplicationsPoolNoCallHangsAndTheErrorSaysWhy() throws Exception {
		Outcome outcome = run();
		System.out.println("small pool, shared: " + outcome);
		assertThat(outcome.unclear.get()).isZero();
		assertThat(outcome.completed.get() + outcome.lockWithoutConnection.get() + outcome.outerWithoutConnection.get())
			.isEqualTo(THREADS * CALLS);
		assertThat(outcome.counter).isEqualTo(outcome.completed.get());
	}

	@Test
	void withAPoolOfItsOwnEveryCallThatBeganItsTransactionCompletes() throws Exception {
		Outcome outcome = run("db-lock.pool.size=2");
		System.out.println("small pool, db-lock's own pool of 2: " + outcome);
		assertThat(outcome.unclear.get()).isZero();
		assertThat(outcome.lockWithoutConnection.get()).isZero();
		assertThat(outcome.completed.get() + outcome.outerWithoutConnection.get()).isEqualTo(THREADS * CALLS);
		assertThat(outcome.completed.get()).isPositive();
		assertThat(outcome.counter).isEqualTo(outcome.completed.get());
	}

	@Test
	void sharingTheApplicationsPoolEveryLockCallReturnsWithinItsBound() throws Exception {
		Bounds bounds = runTimed();
		System.out.println("small pool, shared, Hikari's 30 s connection timeout: " + bounds);
		bounds.assertWithin();
	}

	@Test
	void withAPoolOfItsOwnEveryLockCallReturnsWithinItsBound() throws Exception {
		Bounds bounds = runTimed("db-lock.pool.size=2");
		System.out.println("small pool, db-lock's own pool of 2: " + bounds);
		assertThat(bounds.failedAcquisitions.get()).isZero();
		bounds.assertWithin();
	}

	/**
	 * The shape: a pool of 4 with Hikari's default 30 s connection timeout, 16
	 * threads each calling a {@code @DbLock} method (3 s wait, 1 s statement timeout) inside
	 * an outer transaction; how long each acquisition and each release took.
	 */
	private Bounds runTimed(String... properties) throws Exception {
		database().dataSource(2).close();
		TestDatabase.Connection settings = database().connection();
		Bounds bounds = new Bounds();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(CounterApplication.class)
			.web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties("spring.datasource.url=" + settings.url(), "spring.datasource.username=" + settings.user(),
					"spring.datasource.password=" + settings.password(), "spring.datasource.hikari.maximum-pool-size=4",
					"spring.flyway.enabled=false", "db-lock.default-lease=3s", "db-lock.default-wait=3s",
					"db-lock.statement-timeout=1s")
			.properties(properties)
			.run()) {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_counter (id INT PRIMARY KEY, counter_value BIGINT)");
			jdbc.update("DELETE FROM db_lock_test_counter");
			jdbc.update("INSERT INTO db_lock_test_counter (id, counter_value) VALUES (1, 0)");
			DbLockConnectionPool own = context.getBeanProvider(DbLockConnectionPool.class).getIfAvailable();
			HikariDataSource lockPool = (own != null) ? own.dataSource().unwrap(HikariDataSource.class)
					: context.getBean(HikariDataSource.class);
			bounds.wait = Duration.ofSeconds(3);
			bounds.statementTimeout = Duration.ofSeconds(1);
			bounds.validationTimeout = Duration.ofMillis(lockPool.getValidationTimeout());
			CounterService service = context.getBean(CounterService.class);
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			Concurrently.run(THREADS, (thread) -> {
				for (int i = 0; i < CALLS; i++) {
					long[] entered = new long[1];
					long[] exited = new long[1];
					try {
						outer.executeWithoutResult((status) -> {
							// the outer transaction takes its connection first, as real work does
							jdbc.queryForObject("SELECT 1", Integer.class);
							long start = System.nanoTime();
							try {
								service.run(1, () -> {
									entered[0] = System.nanoTime();
									bounds.acquisition(entered[0] - start, true);
									jdbc.update("UPDATE db_lock_test_counter SET counter_value = counter_value + 1 WHERE id = 1");
									exited[0] = System.nanoTime();
								});
								bounds.release(System.nanoTime() - exited[0]);
							}
							catch (DbLockException ex) {
								if (entered[0] == 0) {
									bounds.acquisition(System.nanoTime() - start, false);
								}
								else {
									bounds.release(System.nanoTime() - exited[0]);
								}
							}
						});
					}
					catch (TransactionException ex) {
						bounds.outerWithoutConnection.incrementAndGet();
					}
				}
			});
		}
		return bounds;
	}

	/** The longest acquisition and release of a run, against the bound of each. */
	private static final class Bounds {

		/** Scheduling slack on a shared machine, part of the documented bound. */
		static final Duration SLACK = Duration.ofSeconds(1);

		Duration wait;

		Duration statementTimeout;

		Duration validationTimeout;

		final AtomicInteger acquired = new AtomicInteger();

		final AtomicInteger failedAcquisitions = new AtomicInteger();

		final AtomicInteger releases = new AtomicInteger();

		final AtomicInteger outerWithoutConnection = new AtomicInteger();

		final AtomicLong longestAcquisitionNanos = new AtomicLong();

		final AtomicLong longestReleaseNanos = new AtomicLong();

		final AtomicInteger acquisitionsOverBound = new AtomicInteger();

		final AtomicInteger releasesOverBound = new AtomicInteger();

		void acquisition(long nanos, boolean acquired) {
			(acquired ? this.acquired : this.failedAcquisitions).incrementAndGet();
			this.longestAcquisitionNanos.accumulateAndGet(nanos, Math::max);
			if (nanos > acquisitionBound().toNanos()) {
				this.acquisitionsOverBound.incrementAndGet();
			}
		}

		void release(long nanos) {
			this.releases.incrementAndGet();
			this.longestReleaseNanos.accumulateAndGet(nanos, Math::max);
			if (nanos > releaseBound().toNanos()) {
				this.releasesOverBound.incrementAndGet();
			}
		}

		/** The wait, the statement timeout, the pool's validation timeout and the slack. */
		Duration acquisitionBound() {
			return this.wait.plus(releaseBound());
		}

		/** A release has no wait. */
		Duration releaseBound() {
			return this.statementTimeout.plus(this.validationTimeout).plus(SLACK);
		}

		void assertWithin() {
			assertThat(this.acquired.get() + this.failedAcquisitions.get()).isPositive();
			assertThat(this.acquisitionsOverBound.get()).isZero();
			assertThat(this.releasesOverBound.get()).isZero();
		}

		@Override
		public String toString() {
			return "acquired=" + this.acquired + " failedAcquisitions=" + this.failedAcquisitions + " releases="
					+ this.releases + " outerWithoutConnection=" + this.outerWithoutConnection
					+ " longestAcquisitionMillis=" + TimeUnit.NANOSECONDS.toMillis(this.longestAcquisitionNanos.get())
					+ " (bound " + acquisitionBound().toMillis() + ") longestReleaseMillis="
					+ TimeUnit.NANOSECONDS.toMillis(this.longestReleaseNanos.get()) + " (bound "
					+ releaseBound().toMillis() + ") acquisitionsOverBound=" + this.acquisitionsOverBound
					+ " releasesOverBound=" + this.releasesOverBound;
		}

	}

	private Outcome run(String... properties) throws Exception {
		database().dataSource(2).close();
		TestDatabase.Connection settings = database().connection();
		Outcome outcome = new Outcome();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(CounterApplication.class)
			.web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties("spring.datasource.url=" + settings.url(), "spring.datasource.username=" + settings.user(),
					"spring.datasource.password=" + settings.password(), "spring.datasource.hikari.maximum-pool-size=4",
					"spring.datasource.hikari.connection-timeout=1000", "spring.flyway.enabled=false",
					"db-lock.default-lease=3s", "db-lock.statement-timeout=1s")
			.properties(properties)
			.run()) {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_counter (id INT PRIMARY KEY, counter_value BIGINT)");
			jdbc.update("DELETE FROM db_lock_test_counter");
			jdbc.update("INSERT INTO db_lock_test_counter (id, counter_value) VALUES (1, 0)");
			CounterService service = context.getBean(CounterService.class);
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			Concurrently.run(THREADS, (thread) -> {
				for (int i = 0; i < CALLS; i++) {
					long start = System.nanoTime();
					try {
						outer.executeWithoutResult((status) -> {
							// the outer transaction takes its connection first, as real work does
							jdbc.queryForObject("SELECT 1", Integer.class);
							service.increment(1);
						});
						outcome.completed.incrementAndGet();
					}
					catch (DbLockException ex) {
						(ex.getMessage().contains("no free connection") ? outcome.lockWithoutConnection
								: outcome.unclear).incrementAndGet();
					}
					catch (TransactionException ex) {
						outcome.outerWithoutConnection.incrementAndGet();
					}
					finally {
						outcome.longestCallNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
					}
				}
			});
			outcome.counter = jdbc.queryForObject("SELECT counter_value FROM db_lock_test_counter WHERE id = 1",
					Long.class);
		}
		return outcome;
	}

	private static final class Outcome {

		final AtomicInteger completed = new AtomicInteger();

		final AtomicInteger lockWithoutConnection = new AtomicInteger();

		final AtomicInteger outerWithoutConnection = new AtomicInteger();

		final AtomicInteger unclear = new AtomicInteger();

		final AtomicLong longestCallNanos = new AtomicLong();

		long counter;

		@Override
		public String toString() {
			return "completed=" + this.completed + " lockWithoutConnection=" + this.lockWithoutConnection
					+ " outerWithoutConnection=" + this.outerWithoutConnection + " unclear=" + this.unclear
					+ " longestCallMillis=" + TimeUnit.NANOSECONDS.toMillis(this.longestCallNanos.get()) + " counter="
					+ this.counter;
		}

	}

}
