package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockUpgradeException;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @DbLock(mode = READ)} and {@code mode = WRITE} through Spring's proxies, on H2:
 * readers share, a writer excludes them, a writer may read, a reader may not write, and the
 * start-up checks of {@code leaseMs} and {@code minHoldMs} for the two modes.
 */
class DbLockReadWriteAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, DbLockAutoConfiguration.class))
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:rw" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	@Test
	void readersOfAnnotatedMethodsShareAndAWriterWaitsForThem() {
		this.contextRunner.withUserConfiguration(Rates.class).run((context) -> {
			assertThat(context).hasNotFailed();
			RatesService rates = context.getBean(RatesService.class);
			CountDownLatch bothIn = new CountDownLatch(2);
			CountDownLatch leave = new CountDownLatch(1);
			CompletableFuture<Long> first = CompletableFuture.supplyAsync(() -> rates.read("eur", bothIn, leave));
			CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> rates.read("eur", bothIn, leave));
			// both readers are in at once: only if they share does this end
			assertThat(bothIn.await(60, TimeUnit.SECONDS)).isTrue();
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> rates.writeAtOnce("eur"));
			leave.countDown();
			long readToken = Math.max(first.get(60, TimeUnit.SECONDS), second.get(60, TimeUnit.SECONDS));
			assertThat(rates.write("eur")).isGreaterThan(readToken);
			assertThat(rowsOf(context.getBean(JdbcTemplate.class))).isZero();
		});
	}

	@Test
	void aWriterMayReadAndAReaderThatAsksToWriteIsRefused() {
		this.contextRunner.withUserConfiguration(Rates.class).run((context) -> {
			RatesService rates = context.getBean(RatesService.class);
			long[] tokens = rates.writeThenRead("usd");
			assertThat(tokens[1]).isEqualTo(tokens[0]);
			assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> rates.readThenWrite("usd"))
				.withMessageContaining("cannot be taken for writing")
				.withRootCauseInstanceOf(LockUpgradeException.class);
			// nothing stays behind: a writer gets in at once
			assertThat(rates.writeAtOnce("usd")).isPositive();
		});
	}

	@Test
	void aLeaseOnAReaderIsItsFixedLease() {
		this.contextRunner.withUserConfiguration(Rates.class).run((context) -> {
			Instant before = Instant.now();
			Instant end = context.getBean(RatesService.class).readWithLease("gbp");
			// 5 s, not the default lease of 30 s
			assertThat(end).isBefore(before.plus(Duration.ofSeconds(20))).isAfter(before);
		});
	}

	@Test
	void aMinimumHoldOnAWriterFailsStartUp() {
		this.contextRunner.withUserConfiguration(WriterWithMinimumHold.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
				.hasMessageContaining("minHoldMs is the lease mode's alone");
		});
	}

	@Test
	void theTemplateGivesAReadWriteLock() {
		this.contextRunner.run((context) -> {
			DbLockTemplate template = context.getBean(DbLockTemplate.class);
			var lock = template.readWriteLock("template");
			lock.readLock().lock();
			try (LockHandle other = template.tryAcquire(DbLockMode.READ, "template").orElseThrow()) {
				assertThat(other.isHeld()).isTrue();
			}
			finally {
				lock.readLock().unlock();
			}
			assertThat(template.execute(DbLockMode.WRITE, "template", null, () -> "written")).isEqualTo("written");
		});
	}

	private static int rowsOf(JdbcTemplate jdbc) {
		return jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_rw", Integer.class)
				+ jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_rw_intents", Integer.class);
	}

	@Configuration(proxyBeanMethods = false)
	static class Rates {

		@Bean
		RatesService ratesService(ObjectProvider<RatesService> self) {
			return new RatesService(self);
		}

	}

	static class RatesService {

		private final ObjectProvider<RatesService> self;

		RatesService(ObjectProvider<RatesService> self) {
			this.self = self;
		}

		@DbLock(mode = DbLockMode.READ, name = "rate", key = "#currency")
		public long read(String currency, CountDownLatch in, CountDownLatch leave) {
			in.countDown();
			try {
				leave.await(60, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return token();
		}

		@DbLock(mode = DbLockMode.READ, name = "rate", key = "#currency", leaseMs = 5000)
		public Instant readWithLease(String currency) {
			return DbLockContext.current().orElseThrow().expiresAt();
		}

		@DbLock(mode = DbLockMode.WRITE, name = "rate", key = "#currency")
		public long write(String currency) {
			return token();
		}

		@DbLock(mode = DbLockMode.WRITE, name = "rate", key = "#currency", waitMs = 0)
		public long writeAtOnce(String currency) {
			return token();
		}

		@DbLock(mode = DbLockMode.WRITE, name = "rate", key = "#currency")
		public long[] writeThenRead(String currency) {
			return new long[] { token(), this.self.getObject().readNow(currency) };
		}

		@DbLock(mode = DbLockMode.READ, name = "rate", key = "#currency")
		public long readNow(String currency) {
			return token();
		}

		@DbLock(mode = DbLockMode.READ, name = "rate", key = "#currency")
		public long readThenWrite(String currency) {
			return this.self.getObject().write(currency);
		}

		private static long token() {
			return DbLockContext.current().orElseThrow().fencingToken();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WriterWithMinimumHold {

		@Bean
		WriterWithMinimumHoldService writerWithMinimumHoldService() {
			return new WriterWithMinimumHoldService();
		}

	}

	static class WriterWithMinimumHoldService {

		@DbLock(mode = DbLockMode.WRITE, minHoldMs = 1000)
		public void run() {
		}

	}

}
