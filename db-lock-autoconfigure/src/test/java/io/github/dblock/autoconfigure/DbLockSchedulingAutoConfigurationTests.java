package io.github.dblock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLockException;
import io.github.dblock.jdbc.JdbcSlotRepository;
import io.github.dblock.jdbc.SlotClaim;
import io.github.dblock.jdbc.SlotRepository;
import io.github.dblock.scheduling.OncePerSlot;
import io.github.dblock.scheduling.OncePerSlotAdvisor;
import org.junit.jupiter.api.Test;

import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @OncePerSlot} through Spring's proxies and scheduler, on H2: the auto-configuration,
 * its back-off, and the start-up errors that name the method.
 */
class DbLockSchedulingAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, PropertyPlaceholderAutoConfiguration.class,
				DbLockAutoConfiguration.class, DbLockGuardAutoConfiguration.class,
				DbLockSchedulingAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=jdbc:h2:mem:slots" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1");

	@Test
	void theAdvisorAndTheSlotRepositoryAreConfigured() {
		this.contextRunner.withUserConfiguration(Hourly.class).withPropertyValues("job.rate=1h").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(OncePerSlotAdvisor.class);
			assertThat(context).getBean(SlotRepository.class).isInstanceOf(JdbcSlotRepository.class);
			assertThat(context.getBean(OncePerSlotAdvisor.class).methods()).containsExactly("Jobs.hourly()");
			assertThat(context.getBean(DbLockSchedulingProperties.class).getRetention()).isEqualTo(Duration.ofDays(1));
		});
	}

	@Test
	void aCallRunsOncePerSlotAndTheTaskIsNamedWithTheKeyPrefix() {
		this.contextRunner.withUserConfiguration(Hourly.class)
			.withPropertyValues("db-lock.key-prefix=billing", "job.rate=PT1H")
			.run((context) -> {
				Jobs jobs = context.getBean(Jobs.class);
				// the first call of the hour's slot runs, the next ones of the same slot do not
				assertThat(jobs.hourly()).isEqualTo(1);
				assertThat(jobs.hourly()).isZero();
				assertThat(jobs.runs()).isEqualTo(1);
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				Map<String, Object> row = jdbc.queryForMap("SELECT task, slot_at FROM db_lock_slot");
				assertThat(row.get("TASK")).isEqualTo("billing:Jobs.hourly");
				// the placeholder was resolved: the slot is a whole hour
				Instant slot = ((java.time.OffsetDateTime) row.get("SLOT_AT")).toInstant();
				assertThat(Duration.between(Instant.EPOCH, slot).toSeconds() % 3600).isZero();
			});
	}

	@Test
	void scheduledMethodsOfTwoNodesRunEachSlotOnceThroughTheirProxies() {
		// two contexts on one database: two nodes, whose schedulers fire the same slots
		String url = "spring.datasource.url=jdbc:h2:mem:twonodes" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1";
		ApplicationContextRunner node = this.contextRunner.withUserConfiguration(Scheduling.class)
			.withPropertyValues(url);
		node.run((nodeA) -> node.run((nodeB) -> {
			assertThat(nodeA).hasNotFailed();
			assertThat(nodeB).hasNotFailed();
			Fired firedA = nodeA.getBean(Fired.class);
			Fired firedB = nodeB.getBean(Fired.class);
			// until both nodes fired each task 4 times
			await().atMost(Duration.ofSeconds(20)).until(() -> List.of("cron", "rate", "delay").stream()
				.allMatch((task) -> firedA.fires(task) >= 4 && firedB.fires(task) >= 4));
			JdbcTemplate jdbc = nodeA.getBean(JdbcTemplate.class);
			for (String task : List.of("cron", "rate", "delay")) {
				int runs = firedA.runs(task) + firedB.runs(task);
				int fires = Math.max(firedA.fires(task), firedB.fires(task));
				int slots = jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_slot WHERE task = ?", Integer.class, task);
				System.out.println("two nodes, task " + task + ": fires " + firedA.fires(task) + " + " + firedB.fires(task)
						+ ", runs " + firedA.runs(task) + " + " + firedB.runs(task) + ", slots claimed " + slots);
				// a run per claimed slot, never more runs than one node's fires (each slot fired by both)
				assertThat(runs).isBetween(slots - 2, slots);
				assertThat(runs).isLessThanOrEqualTo(fires + 1);
				assertThat(runs).isGreaterThanOrEqualTo(3);
			}
		}));
	}

	@Test
	void aUserSlotRepositoryMakesTheAutoConfiguredOneBackOff() {
		this.contextRunner.withUserConfiguration(Hourly.class, OwnSlots.class).withPropertyValues("job.rate=1h").run((context) -> {
			assertThat(context).hasSingleBean(SlotRepository.class);
			assertThat(context.getBean(SlotRepository.class)).isSameAs(context.getBean(OwnSlots.class).slots);
			assertThat(context.getBean(Jobs.class).hourly()).isEqualTo(1);
			assertThat(context.getBean(OwnSlots.class).claims).hasValue(1);
		});
	}

	@Test
	void aUserAdvisorMakesTheAutoConfiguredOneBackOff() {
		this.contextRunner.withUserConfiguration(OwnAdvisor.class).run((context) -> {
			assertThat(context).hasSingleBean(OncePerSlotAdvisor.class);
			assertThat(context).hasBean("ownAdvisor");
		});
	}

	@Test
	void disabledDbLockConfiguresNoSlots() {
		this.contextRunner.withUserConfiguration(Hourly.class).withPropertyValues("db-lock.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(OncePerSlotAdvisor.class);
			assertThat(context).doesNotHaveBean(SlotRepository.class);
		});
	}

	@Test
	void oncePerSlotMethodsWithNoDataSourceFailStartUpRatherThanRunOnEveryNode() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DbLockAutoConfiguration.class,
					DbLockGuardAutoConfiguration.class, DbLockSchedulingAutoConfiguration.class))
			.withUserConfiguration(Hourly.class)
			.run((context) -> assertThat(context).getFailure()
				.isInstanceOf(DbLockConfigurationException.class)
				.hasMessageContaining("@OncePerSlot methods [Jobs.hourly] would run on every node")
				.hasMessageContaining("there is no DataSource bean"));
	}

	@Test
	void aMethodWithoutScheduledFailsStartUpNamed() {
		assertStartUpFails(NoScheduledConfig.class, "Invalid @OncePerSlot on NoScheduled.run(): the method has no @Scheduled");
	}

	@Test
	void aScheduledWithSeveralTriggersFailsStartUpNamed() {
		assertStartUpFails(SeveralTriggersConfig.class, "Invalid @OncePerSlot on SeveralTriggers.run(): its @Scheduled "
				+ "must have exactly one of cron, fixedRate and fixedDelay, it has [cron, fixedRate]");
	}

	@Test
	void twoScheduledFailStartUpNamed() {
		assertStartUpFails(TwoSchedulesConfig.class,
				"Invalid @OncePerSlot on TwoSchedules.run(): the method has 2 @Scheduled annotations");
	}

	@Test
	void aBadCronFailsStartUpNamed() {
		assertStartUpFails(BadCronConfig.class,
				"Invalid @OncePerSlot on BadCron.run(): its @Scheduled(cron = \"0 0 25 * * *\") is not a cron expression");
	}

	@Test
	void aBadZoneFailsStartUpNamed() {
		assertStartUpFails(BadZoneConfig.class,
				"Invalid @OncePerSlot on BadZone.run(): its @Scheduled(zone = \"Mars/Olympus\") is not a time zone");
	}

	@Test
	void aZeroRateFailsStartUpNamed() {
		assertStartUpFails(ZeroRateConfig.class,
				"Invalid @OncePerSlot on ZeroRate.run(): its @Scheduled(fixedRate) must be positive, got PT0S");
	}

	@Test
	void anUnresolvablePlaceholderFailsStartUpNamed() {
		assertStartUpFails(Hourly.class, "Invalid @OncePerSlot on Jobs.hourly(): its @Scheduled's \"${job.rate}\" "
				+ "could not be resolved");
	}

	@Test
	void aFinalMethodFailsStartUpNamed() {
		assertStartUpFails(FinalMethodConfig.class, "Invalid @OncePerSlot on FinalMethod.run(): Spring's proxy cannot "
				+ "intercept a private, final or static method");
	}

	@Test
	void aReactiveMethodFailsStartUpNamed() {
		assertStartUpFails(ReactiveConfig.class, "Invalid @OncePerSlot on Reactive.run(): a reactive or suspending "
				+ "@Scheduled method is called once, at start-up");
	}

	@Test
	void withoutItsTableStartUpFailsNamingTheMethods() {
		this.contextRunner.withUserConfiguration(Hourly.class)
			.withPropertyValues("db-lock.schema.migrate=false", "job.rate=1h")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("@OncePerSlot methods [Jobs.hourly()] cannot claim their slots: its table "
							+ "db_lock_slot cannot be read");
			});
	}

	@Test
	void aDisabledCronStartsAndADirectCallIsRefused() {
		this.contextRunner.withUserConfiguration(DisabledConfig.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> context.getBean(Disabled.class).run())
				.withMessageContaining("@OncePerSlot on Disabled.run(): its @Scheduled cron is disabled");
		});
	}

	private void assertStartUpFails(Class<?> configuration, String message) {
		this.contextRunner.withUserConfiguration(configuration).run((context) -> {
			assertThat(context).hasFailed();
			Throwable cause = NestedExceptionUtils.getRootCause(context.getStartupFailure());
			Throwable failure = context.getStartupFailure();
			while (failure != null && !(failure instanceof DbLockException)) {
				failure = failure.getCause();
			}
			assertThat(failure).as("a DbLockException, root cause %s", cause).isNotNull();
			assertThat(failure).hasMessageStartingWith(message);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Hourly {

		@Bean
		Jobs jobs() {
			return new Jobs();
		}

	}

	static class Jobs {

		private final AtomicInteger runs = new AtomicInteger();

		@Scheduled(fixedRateString = "${job.rate}")
		@OncePerSlot
		public int hourly() {
			return this.runs.incrementAndGet();
		}

		int runs() {
			return this.runs.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class Scheduling {

		@Bean
		Fired fired() {
			return new Fired();
		}

		@Bean
		ThreadPoolTaskScheduler taskScheduler() {
			ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
			scheduler.setPoolSize(3);
			return scheduler;
		}

		/** Counts each node's fires before the slot's advice: what the scheduler called, run or skipped. */
		@Bean
		static DefaultPointcutAdvisor firesCounter(ObjectProvider<Fired> fired) {
			DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Scheduled.class),
					(MethodInterceptor) (invocation) -> {
						fired.getObject().fired(invocation.getMethod().getName());
						return invocation.proceed();
					});
			advisor.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return advisor;
		}

		@Bean
		ScheduledJobs scheduledJobs(Fired fired) {
			return new ScheduledJobs(fired);
		}

	}

	/** What a node's scheduler fired and what ran, per task. */
	static class Fired {

		private final Map<String, AtomicInteger> fires = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		void fired(String task) {
			this.fires.computeIfAbsent(task, (key) -> new AtomicInteger()).incrementAndGet();
		}

		void ran(String task) {
			this.runs.computeIfAbsent(task, (key) -> new AtomicInteger()).incrementAndGet();
		}

		int fires(String task) {
			AtomicInteger count = this.fires.get(task);
			return (count != null) ? count.get() : 0;
		}

		int runs(String task) {
			AtomicInteger count = this.runs.get(task);
			return (count != null) ? count.get() : 0;
		}

	}

	static class ScheduledJobs {

		private final Fired fired;

		ScheduledJobs(Fired fired) {
			this.fired = fired;
		}

		@Scheduled(cron = "* * * * * *")
		@OncePerSlot(name = "cron")
		public void cron() {
			this.fired.ran("cron");
		}

		@Scheduled(fixedRate = 1000)
		@OncePerSlot(name = "rate")
		public void rate() {
			this.fired.ran("rate");
		}

		@Scheduled(fixedDelay = 1, timeUnit = java.util.concurrent.TimeUnit.SECONDS)
		@OncePerSlot(name = "delay")
		public void delay() {
			this.fired.ran("delay");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnSlots {

		final AtomicInteger claims = new AtomicInteger();

		final SlotRepository slots = new SlotRepository() {

			@Override
			public SlotClaim claim(String task, String owner, java.util.function.UnaryOperator<Instant> slotAt,
					Duration retention) {
				OwnSlots.this.claims.incrementAndGet();
				Instant now = Instant.now();
				return new SlotClaim(now, slotAt.apply(now), true);
			}

			@Override
			public List<ClaimedSlot> claims(String task, int limit) {
				return List.of();
			}

			@Override
			public String unavailable() {
				return null;
			}

			@Override
			public int maxTaskLength() {
				return 255;
			}

		};

		@Bean
		SlotRepository ownSlotRepository() {
			return this.slots;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnAdvisor {

		@Bean
		static OncePerSlotAdvisor ownAdvisor() {
			return new OncePerSlotAdvisor(() -> {
				throw new IllegalStateException("not used");
			}, null, "", 255, Duration.ofDays(1), 0);
		}

	}

	static class Reactive {

		@Scheduled(fixedRate = 1000)
		@OncePerSlot
		public reactor.core.publisher.Mono<Void> run() {
			return reactor.core.publisher.Mono.empty();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReactiveConfig {

		@Bean
		Reactive reactive() {
			return new Reactive();
		}

	}

	static class NoScheduled {

		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NoScheduledConfig {

		@Bean
		NoScheduled noScheduled() {
			return new NoScheduled();
		}

	}

	static class SeveralTriggers {

		@Scheduled(cron = "0 * * * * *", fixedRate = 1000)
		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SeveralTriggersConfig {

		@Bean
		SeveralTriggers severalTriggers() {
			return new SeveralTriggers();
		}

	}

	static class TwoSchedules {

		@Scheduled(cron = "0 * * * * *")
		@Scheduled(fixedRate = 1000)
		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoSchedulesConfig {

		@Bean
		TwoSchedules twoSchedules() {
			return new TwoSchedules();
		}

	}

	static class BadCron {

		@Scheduled(cron = "0 0 25 * * *")
		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadCronConfig {

		@Bean
		BadCron badCron() {
			return new BadCron();
		}

	}

	static class BadZone {

		@Scheduled(cron = "0 0 3 * * *", zone = "Mars/Olympus")
		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadZoneConfig {

		@Bean
		BadZone badZone() {
			return new BadZone();
		}

	}

	static class ZeroRate {

		@Scheduled(fixedRate = 0)
		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ZeroRateConfig {

		@Bean
		ZeroRate zeroRate() {
			return new ZeroRate();
		}

	}

	static class FinalMethod {

		@Scheduled(fixedRate = 1000)
		@OncePerSlot
		public final void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FinalMethodConfig {

		@Bean
		FinalMethod finalMethod() {
			return new FinalMethod();
		}

	}

	static class Disabled {

		@Scheduled(cron = "-")
		@OncePerSlot
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DisabledConfig {

		@Bean
		Disabled disabled() {
			return new Disabled();
		}

	}

}
