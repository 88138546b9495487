package io.github.dblock.nodes;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockSchedulingAutoConfiguration;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.scheduling.OncePerSlot;
import io.github.dblock.testsupport.DatabaseClock;
import io.github.dblock.testsupport.TestDatabase;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * One node, as a process of its own (its clock shifted by {@code faketime} when its test
 * says so), of the scheduled jobs run once per slot: a Spring Boot application whose
 * {@code ThreadPoolTaskScheduler} fires, every {@code period} by the node's own clock, three
 * tasks: {@code cron} ({@code @Scheduled(cron)} with {@code @OncePerSlot}), {@code rate}
 * ({@code @Scheduled(fixedRate)} started at a multiple of the period by the node's clock,
 * with {@code @OncePerSlot}) and {@code shedlock} (the same cron, a 0.1 s task under
 * ShedLock with lockAtLeastFor 0.5 s, for comparison). For each fire whose nominal time (the node's clock at the
 * fire, rounded to the period) is within [start, end), prints
 * {@code fire:<task>:<nominal millis>:<1 if it ran, else 0>}; and prints
 * {@code clockOffsetMillis} (its clock minus the database's) and {@code ran}.
 */
public final class SlotNode {

	/** ShedLock's table, which the test creates. */
	static final String SHEDLOCK_TABLE = TestDatabase.TABLE_PREFIX + "_test_shedlock";

	/** The fires, as printed. */
	private static final List<String> fires = new CopyOnWriteArrayList<>();

	/** Whether the method of the fire under way ran. */
	private static final ThreadLocal<Boolean> ran = ThreadLocal.withInitial(() -> false);

	private static long period;

	private SlotNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, period in milliseconds (a divisor of a minute, in
	 * whole seconds), start and end of the nominal times to report (epoch milliseconds)
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		period = Long.parseLong(args[3]);
		long start = Long.parseLong(args[4]);
		long end = Long.parseLong(args[5]);
		ConfigurableApplicationContext context = new SpringApplicationBuilder(Config.class)
			.web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.properties("spring.datasource.url=" + args[0], "spring.datasource.username=" + args[1],
					"spring.datasource.password=" + args[2], "db-lock.table-name=" + TestDatabase.TABLE,
					"node.period=" + period, "node.cron=*/" + (period / 1000) + " * * * * *",
					"spring.main.banner-mode=off", "logging.level.root=WARN",
					"logging.level.io.github.dblock.scheduling.OncePerSlotInterceptor=INFO")
			.run();
		try {
			DataSource dataSource = context.getBean(DataSource.class);
			System.out.println("clockOffsetMillis=" + clockOffsetMillis(new JdbcTemplate(dataSource),
					SqlDialects.detect(dataSource, TestDatabase.TABLE)));
			// until the node's clock is past the last nominal time, and the fires of it done
			long wait;
			while ((wait = end + period + 500 - System.currentTimeMillis()) > 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(wait));
			}
		}
		finally {
			context.close();
		}
		int runs = 0;
		for (String fire : fires) {
			String[] parts = fire.split(":");
			long nominal = Long.parseLong(parts[2]);
			if (nominal >= start && nominal < end) {
				System.out.println(fire);
				runs += Integer.parseInt(parts[3]);
			}
		}
		System.out.println("ran=" + runs);
	}

	/** This JVM's clock minus the database's, read between two readings of this JVM's. */
	private static long clockOffsetMillis(JdbcTemplate jdbc, io.github.dblock.jdbc.dialect.SqlDialect dialect) {
		long best = Long.MAX_VALUE;
		long offset = 0;
		for (int i = 0; i < 5; i++) {
			long before = System.currentTimeMillis();
			Instant database = DatabaseClock.now(jdbc, dialect);
			long after = System.currentTimeMillis();
			if (after - before < best) {
				best = after - before;
				offset = (before + after) / 2 - database.toEpochMilli();
			}
		}
		return offset;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, AopAutoConfiguration.class,
			PropertyPlaceholderAutoConfiguration.class, DbLockAutoConfiguration.class,
			DbLockSchedulingAutoConfiguration.class })
	static class Config {

		@Bean
		ThreadPoolTaskScheduler taskScheduler() {
			ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
			scheduler.setPoolSize(3);
			return scheduler;
		}

		@Bean
		Jobs jobs(ObjectProvider<LockProvider> shedLock) {
			return new Jobs(shedLock);
		}

		@Bean
		LockProvider shedLockProvider(DataSource dataSource) {
			return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
				.withJdbcTemplate(new JdbcTemplate(dataSource))
				.withTableName(SHEDLOCK_TABLE)
				.usingDbTime()
				.build());
		}

		/** Records each fire before the slot's advice, with whether its method ran. */
		@Bean
		static DefaultPointcutAdvisor fireRecorder() {
			DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
					new AnnotationMatchingPointcut(null, Scheduled.class), (MethodInterceptor) (invocation) -> {
						long now = System.currentTimeMillis();
						long nominal = Math.floorDiv(now + period / 2, period) * period;
						ran.set(false);
						try {
							return invocation.proceed();
						}
						finally {
							fires.add("fire:" + invocation.getMethod().getName() + ":" + nominal + ":"
									+ (ran.get() ? 1 : 0));
						}
					});
			advisor.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return advisor;
		}

	}

	/** The node's three tasks. */
	public static class Jobs {

		private final ObjectProvider<LockProvider> shedLock;

		Jobs(ObjectProvider<LockProvider> shedLock) {
			this.shedLock = shedLock;
		}

		/** Every period by the node's clock, once per slot. */
		@Scheduled(cron = "${node.cron}")
		@OncePerSlot(name = "cron")
		public void cron() {
			ran.set(true);
		}

		/** Every period from a multiple of it by the node's clock, once per slot. */
		@Scheduled(fixedRateString = "${node.period}",
				initialDelayString = "#{T(io.github.dblock.nodes.SlotNode).untilNextMultiple(${node.period})}")
		@OncePerSlot(name = "rate")
		public void rate() {
			ran.set(true);
		}

		/**
		 * Every period by the node's clock, under ShedLock ({@code JdbcTemplateLockProvider} on the
		 * database's time) with a 0.1 s task, lockAtLeastFor 0.5 s and lockAtMostFor 1.5 s.
		 */
		@Scheduled(cron = "${node.cron}")
		public void shedlock() {
			Optional<SimpleLock> lock = this.shedLock.getObject().lock(new LockConfiguration(Instant.now(), "shedlock",
					Duration.ofMillis(1500), Duration.ofMillis(500)));
			if (lock.isPresent()) {
				try {
					ran.set(true);
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
				}
				finally {
					lock.get().unlock();
				}
			}
		}

	}

	/**
	 * The time from now to the next multiple of a period, by this JVM's clock.
	 * @param period the period in milliseconds
	 * @return the milliseconds
	 */
	public static long untilNextMultiple(long period) {
		return period - Math.floorMod(System.currentTimeMillis(), period);
	}

}
