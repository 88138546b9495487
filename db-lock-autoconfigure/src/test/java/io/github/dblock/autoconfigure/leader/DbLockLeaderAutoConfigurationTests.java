package io.github.dblock.autoconfigure.leader;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.DbLockException;
import io.github.dblock.actuate.DbLockLeadersEndpoint;
import io.github.dblock.actuate.DbLockLeadersEndpoint.LeadersReport;
import io.github.dblock.actuate.DbLockLeadersEndpoint.RoleReport;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockSchedulingAutoConfiguration;
import io.github.dblock.autoconfigure.endpoint.DbLockEndpointAutoConfiguration;
import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.leader.Leader;
import io.github.dblock.leader.LeaderOnly;
import io.github.dblock.leader.LeaderOnlyAdvisor;
import io.github.dblock.leader.LeaderRole;
import io.github.dblock.leader.LeadershipGrantedEvent;
import io.github.dblock.leader.LeadershipRevokedEvent;
import io.github.dblock.leader.LeadershipRevokedEvent.Reason;
import io.github.dblock.scheduling.OncePerSlot;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.Advised;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The leader election through the auto-configuration, on H2: two application contexts on
 * one database are two instances.
 */
class DbLockLeaderAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				TransactionAutoConfiguration.class, AopAutoConfiguration.class, DbLockAutoConfiguration.class,
				DbLockLeaderAutoConfiguration.class));

	/** A runner of instances on one new database, candidates for the role "billing". */
	private ApplicationContextRunner instances() {
		return this.contextRunner.withPropertyValues(
				"spring.datasource.url=jdbc:h2:mem:leader" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1",
				"db-lock.leader.roles=billing", "db-lock.leader.poll-interval=50ms", "db-lock.leader.lease=4s");
	}

	@Test
	void withoutRolesThereIsNoElectionButLeaderOnlyIsChecked() {
		this.contextRunner.withPropertyValues("spring.datasource.url=jdbc:h2:mem:leader-none;DB_CLOSE_DELAY=-1")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(DbLockLeaders.class);
				assertThat(context).hasSingleBean(LeaderOnlyAdvisor.class);
			});
	}

	@Test
	void theOnlyCandidateLeadsRunsItsLeaderOnlyMethodsAndStartsItsRoleBeans() {
		instances().withUserConfiguration(Instance.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DbLockLeaders leaders = context.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> leaders.isLeader("billing"));
			long term = leaders.term("billing").orElseThrow();
			assertThat(term).isPositive();
			Leader leader = leaders.leader("billing").orElseThrow();
			assertThat(leader.term()).isEqualTo(term);
			assertThat(leader.owner()).contains("/" + ProcessHandle.current().pid() + "/");
			assertThat(leaders.leaderSince("billing")).isPresent();
			assertThat(context.getBean(Events.class).seen()).containsExactly("granted " + term);
			Jobs jobs = context.getBean(Jobs.class);
			assertThat(jobs.count()).isEqualTo(1);
			assertThat(jobs.flag()).isTrue();
			assertThat(jobs.name()).contains("ran");
			assertThat(jobs.runs()).isEqualTo(3);
			assertThat(context.getBean(Poller.class).isRunning()).isTrue();
			assertThat(leaders.isCandidate("billing")).isTrue();
		});
	}

	@Test
	void ofTwoInstancesOneLeadsTheOtherSkipsItsLeaderOnlyMethodsAndAYieldHandsOver() {
		List<String> order = new CopyOnWriteArrayList<>();
		instances().withUserConfiguration(Instance.class).withBean(Order.class, () -> new Order(order)).run((first) -> {
			DbLockLeaders a = first.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> a.isLeader("billing"));
			long termA = a.term("billing").orElseThrow();
			instances().withPropertyValues(url(first))
				.withUserConfiguration(Instance.class)
				.withBean(Order.class, () -> new Order(order))
				.run((second) -> {
					DbLockLeaders b = second.getBean(DbLockLeaders.class);
					Jobs jobsB = second.getBean(Jobs.class);
					assertThat(b.isLeader("billing")).isFalse();
					assertThat(b.term("billing")).isEmpty();
					// not run: null, the primitives' defaults, an empty Optional
					assertThat(jobsB.count()).isZero();
					assertThat(jobsB.flag()).isFalse();
					assertThat(jobsB.name()).isEmpty();
					assertThat(jobsB.boxed()).isNull();
					assertThat(jobsB.runs()).isZero();
					assertThat(second.getBean(Poller.class).isRunning()).isFalse();
					// both say who leads, from the table
					assertThat(b.leader("billing").orElseThrow().term()).isEqualTo(termA);
					assertThat(b.leader("billing")).isEqualTo(a.leader("billing"));

					a.yield("billing");
					assertThat(a.isLeader("billing")).isFalse();
					assertThat(first.getBean(Poller.class).isRunning()).isFalse();
					await().atMost(PATIENCE).until(() -> b.isLeader("billing"));
					long termB = b.term("billing").orElseThrow();
					assertThat(termB).isGreaterThan(termA);
					assertThat(second.getBean(Poller.class).isRunning()).isTrue();
					assertThat(jobsB.count()).isEqualTo(1);
					assertThat(first.getBean(Jobs.class).flag()).isFalse();
					assertThat(first.getBean(Events.class).seen()).containsExactly("granted " + termA,
							"revoked " + termA + " " + Reason.YIELDED);
					// the revoked event of the first came before the second was granted
					assertThat(order).containsSubsequence("revoked " + termA + " " + Reason.YIELDED, "granted " + termB);
				});
		});
	}

	@Test
	void aLeaderThatStopsHandsOverAtOnce() {
		List<String> order = new CopyOnWriteArrayList<>();
		instances().withUserConfiguration(Instance.class).withBean(Order.class, () -> new Order(order)).run((first) -> {
			DbLockLeaders a = first.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> a.isLeader("billing"));
			long termA = a.term("billing").orElseThrow();
			instances().withPropertyValues(url(first))
				.withUserConfiguration(Instance.class)
				.withBean(Order.class, () -> new Order(order))
				.run((second) -> {
					DbLockLeaders b = second.getBean(DbLockLeaders.class);
					assertThat(b.isLeader("billing")).isFalse();
					first.stop();
					assertThat(a.isCandidate("billing")).isFalse();
					assertThat(a.isLeader("billing")).isFalse();
					await().atMost(PATIENCE).until(() -> b.isLeader("billing"));
					assertThat(order).containsSubsequence("revoked " + termA + " " + Reason.STOPPED,
							"granted " + b.term("billing").orElseThrow());
				});
		});
	}

	@Test
	void aLeaderWhoseRowIsDeletedStepsDownAndTheRoleIsTakenAgain() {
		instances().withUserConfiguration(Instance.class).run((context) -> {
			DbLockLeaders leaders = context.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> leaders.isLeader("billing"));
			long term = leaders.term("billing").orElseThrow();
			// an operator deletes the row: the next renewal finds it gone
			context.getBean(JdbcTemplate.class).update("DELETE FROM db_lock WHERE lock_key = 'leader:billing'");
			await().atMost(PATIENCE)
				.until(() -> context.getBean(Events.class).seen().contains("revoked " + term + " " + Reason.LOST));
			await().atMost(PATIENCE).until(() -> leaders.isLeader("billing"));
			assertThat(leaders.term("billing").orElseThrow()).isGreaterThan(term);
		});
	}

	@Test
	void theEndpointShowsWhoLeadsEachRoleAndThisInstancesPart() {
		instances().withConfiguration(AutoConfigurations.of(DbLockEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=dblockleaders", "db-lock.key-prefix=app")
			.run((context) -> {
				DbLockLeaders leaders = context.getBean(DbLockLeaders.class);
				await().atMost(PATIENCE).until(() -> leaders.isLeader("billing"));
				LeadersReport report = context.getBean(DbLockLeadersEndpoint.class).leaders();
				assertThat(report.lease()).isEqualTo("PT4S");
				assertThat(report.pollInterval()).isEqualTo("PT0.05S");
				RoleReport role = report.roles().get(0);
				assertThat(role.role()).isEqualTo("billing");
				assertThat(role.leader()).isEqualTo(leaders.leader("billing").orElseThrow().owner());
				assertThat(role.term()).isEqualTo(leaders.term("billing").orElseThrow());
				assertThat(role.since()).isNotNull();
				assertThat(role.expiresAt()).isAfter(role.since());
				assertThat(role.thisInstanceLeads()).isTrue();
				assertThat(role.thisInstanceIsCandidate()).isTrue();
				// the role's key takes the key prefix
				assertThat(context.getBean(JdbcTemplate.class)
					.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key = 'app:leader:billing'", Integer.class))
					.isOne();
			});
		instances().withConfiguration(AutoConfigurations.of(DbLockEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=dblock")
			.run((context) -> assertThat(context).doesNotHaveBean(DbLockLeadersEndpoint.class));
	}

	@Test
	void aScheduledLeaderOnlyMethodRunsOnTheLeaderAlone() {
		instances().withUserConfiguration(Scheduled.class).run((first) -> {
			DbLockLeaders a = first.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> a.isLeader("billing"));
			instances().withPropertyValues(url(first)).withUserConfiguration(Scheduled.class).run((second) -> {
				Ticks leader = first.getBean(Ticks.class);
				Ticks follower = second.getBean(Ticks.class);
				int before = leader.runs();
				// both schedulers fire every 10 ms; the leader's method runs, the follower's returns
				await().atMost(PATIENCE).until(() -> leader.runs() >= before + 5);
				assertThat(second.getBean(DbLockLeaders.class).isLeader("billing")).isFalse();
				assertThat(follower.runs()).isZero();
			});
		});
	}

	@Test
	void aListenerThatYieldsOnItsGrantStartsNoRoleBean() {
		List<String> order = new CopyOnWriteArrayList<>();
		instances().withUserConfiguration(Instance.class, YieldOnce.class)
			.withBean(Order.class, () -> new Order(order))
			.run((context) -> {
				DbLockLeaders leaders = context.getBean(DbLockLeaders.class);
				// yielded on the first grant, taken again after the hold-back
				await().atMost(PATIENCE).until(() -> leaders.isLeader("billing") && order.contains("start"));
				assertThat(order).hasSizeGreaterThanOrEqualTo(4);
				assertThat(order.get(1)).endsWith(Reason.YIELDED.toString());
				assertThat(order.get(2)).startsWith("granted ");
				assertThat(order.get(3)).isEqualTo("start");
			});
	}

	@Test
	void aListenerThatFailsOnItsGrantEndsNeitherTheGrantNorTheCandidacy() {
		instances().withUserConfiguration(Instance.class, FailOnGrant.class).run((context) -> {
			DbLockLeaders leaders = context.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> leaders.isLeader("billing"));
			long first = leaders.term("billing").orElseThrow();
			assertThat(context.getBean(Poller.class).isRunning()).isTrue();
			leaders.yield("billing");
			// the candidacy goes on: the role is taken again after the hold-back
			await().atMost(PATIENCE).until(() -> leaders.isLeader("billing"));
			assertThat(leaders.term("billing").orElseThrow()).isGreaterThan(first);
		});
	}

	@Test
	void aRoleBeanThatAnExplicitStartStartsOnAnInstanceThatDoesNotLeadIsStopped() {
		instances().withUserConfiguration(Instance.class).run((first) -> {
			DbLockLeaders a = first.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> a.isLeader("billing"));
			instances().withPropertyValues(url(first)).withUserConfiguration(Instance.class).run((second) -> {
				Poller poller = second.getBean(Poller.class);
				// an explicit start starts every lifecycle bean, whatever its isAutoStartup()
				second.start();
				assertThat(second.getBean(DbLockLeaders.class).isLeader("billing")).isFalse();
				await().atMost(PATIENCE).until(() -> !poller.isRunning());
				assertThat(poller.starts()).isOne();
			});
		});
	}

	@Test
	void aYieldInsideATransactionHandsOverWithoutWaitingForItsCommit() {
		instances().withUserConfiguration(Instance.class).run((first) -> {
			DbLockLeaders a = first.getBean(DbLockLeaders.class);
			await().atMost(PATIENCE).until(() -> a.isLeader("billing"));
			instances().withPropertyValues(url(first)).withUserConfiguration(Instance.class).run((second) -> {
				DbLockLeaders b = second.getBean(DbLockLeaders.class);
				new TransactionTemplate(first.getBean(PlatformTransactionManager.class)).executeWithoutResult((tx) -> {
					a.yield("billing");
					// the other instance takes the role while this transaction is still open
					await().atMost(PATIENCE).until(() -> b.isLeader("billing"));
				});
			});
		});
	}

	@Test
	void aLeaderOnlyMethodThatAProxyCannotInterceptFailsStartUp() {
		instances().withBean(FinalJobs.class)
			.run((context) -> assertThat(failure(context)).isInstanceOf(DbLockException.class)
				.hasMessageContaining("@LeaderOnly on " + FinalJobs.class.getName() + ".run")
				.hasMessageContaining("a private, static or final method cannot be intercepted"));
	}

	@Test
	void aReactiveLeaderOnlyMethodFailsStartUp() {
		instances().withBean(ReactiveJobs.class)
			.run((context) -> assertThat(failure(context)).isInstanceOf(DbLockException.class)
				.hasMessageContaining("@LeaderOnly on " + ReactiveJobs.class.getName() + ".run")
				.hasMessageContaining("a reactive or suspending method returns its work to be run later"));
	}

	@Test
	void leaderOnlyRunsOutsideOncePerSlotSoThatAFollowerClaimsNoSlot() {
		instances().withConfiguration(AutoConfigurations.of(DbLockSchedulingAutoConfiguration.class))
			.withBean(Both.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				List<String> advisors = java.util.Arrays.stream(((Advised) context.getBean(Both.class)).getAdvisors())
					.map((advisor) -> advisor.getClass().getSimpleName())
					.filter((name) -> name.equals("LeaderOnlyAdvisor") || name.equals("OncePerSlotAdvisor"))
					.toList();
				assertThat(advisors).containsExactly("LeaderOnlyAdvisor", "OncePerSlotAdvisor");
			});
	}

	@Test
	void aRoleBeanWithoutAnyRoleConfiguredFailsStartUp() {
		this.contextRunner.withPropertyValues("spring.datasource.url=jdbc:h2:mem:leader-norole;DB_CLOSE_DELAY=-1")
			.withUserConfiguration(OtherRole.class)
			.run((context) -> assertThat(failure(context)).isInstanceOf(DbLockException.class)
				.hasMessage("The beans [reportsPoller] are marked @LeaderRole, but db-lock.leader.roles is empty: "
						+ "they would never start; name their roles there"));
	}

	@Test
	void aLeaderOnlyMethodNamingARoleNotConfiguredFailsStartUp() {
		this.contextRunner.withPropertyValues("spring.datasource.url=jdbc:h2:mem:leader-bad;DB_CLOSE_DELAY=-1")
			.withUserConfiguration(Instance.class)
			.run((context) -> assertThat(failure(context)).isInstanceOf(DbLockException.class)
				.hasMessageContaining("@LeaderOnly on " + Jobs.class.getName() + ".")
				.hasMessageContaining("the role 'billing' is not in db-lock.leader.roles []"));
		instances().withPropertyValues("db-lock.leader.roles=reports")
			.withUserConfiguration(Instance.class)
			.run((context) -> assertThat(failure(context)).hasMessageContaining("db-lock.leader.roles [reports]"));
	}

	@Test
	void badRolesAndTimesFailStartUpNamingTheProperty() {
		instances().withPropertyValues("db-lock.leader.roles=a,a")
			.run((context) -> assertThat(failure(context)).isInstanceOf(DbLockException.class)
				.hasMessage("db-lock.leader.roles names the role 'a' twice"));
		this.contextRunner
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:leader-blank;DB_CLOSE_DELAY=-1",
					"db-lock.leader.roles[0]=a", "db-lock.leader.roles[1]= ")
			.run((context) -> assertThat(failure(context)).hasMessageContaining("db-lock.leader.roles has a blank role"));
		instances().withPropertyValues("db-lock.leader.roles=" + "r".repeat(300))
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("db-lock.leader.roles has the role 'rrr")
				.hasStackTraceContaining("which is not a valid key: Lock key is 307 characters long"));
		instances().withPropertyValues("db-lock.leader.lease=0s")
			.run((context) -> assertThat(failure(context)).hasMessageContaining("db-lock.leader.lease must be positive"));
		instances().withPropertyValues("db-lock.leader.lease=4s", "db-lock.watchdog.interval=2400ms")
			.run((context) -> assertThat(failure(context)).hasMessageStartingWith(
					"db-lock.leader.lease (4s) is renewed every db-lock.watchdog.interval (2.4s)"));
		instances().withPropertyValues("db-lock.leader.lease=4s", "db-lock.watchdog.interval=2399ms")
			.run((context) -> assertThat(context).hasNotFailed());
		instances().withPropertyValues("db-lock.leader.poll-interval=0s")
			.run((context) -> assertThat(failure(context))
				.hasMessageContaining("db-lock.leader.poll-interval must be positive"));
	}

	@Test
	void roleBeansMustBeSmartLifecyclesThatDoNotStartThemselvesForAConfiguredRole() {
		instances().withUserConfiguration(Eager.class)
			.run((context) -> assertThat(failure(context)).isInstanceOf(DbLockException.class)
				.hasMessageContaining("@LeaderRole(\"billing\") on the bean 'eager'")
				.hasMessageContaining("isAutoStartup() returns true"));
		instances().withUserConfiguration(NotALifecycle.class)
			.run((context) -> assertThat(failure(context))
				.hasMessageContaining("@LeaderRole(\"billing\") on the bean 'plain': it is not a SmartLifecycle"));
		instances().withUserConfiguration(OtherRole.class)
			.run((context) -> assertThat(failure(context))
				.hasMessageContaining("A @LeaderRole bean names the role 'reports', which is not in db-lock.leader.roles [billing]"));
	}

	private static String url(AssertableApplicationContext context) {
		return "spring.datasource.url=" + context.getEnvironment().getProperty("spring.datasource.url");
	}

	private static Throwable failure(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		return NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure());
	}

	@Configuration(proxyBeanMethods = false)
	static class Instance {

		@Bean
		Jobs jobs() {
			return new Jobs();
		}

		@Bean
		Events events(ObjectProvider<Order> order) {
			Order shared = order.getIfAvailable();
			return new Events((shared != null) ? shared.lines() : new CopyOnWriteArrayList<>());
		}

		@Bean
		@LeaderRole("billing")
		Poller poller() {
			return new Poller(false);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class Scheduled {

		@Bean
		Ticks ticks() {
			return new Ticks();
		}

	}

	static class Ticks {

		private final AtomicInteger runs = new AtomicInteger();

		@org.springframework.scheduling.annotation.Scheduled(fixedRate = 10)
		@LeaderOnly(role = "billing")
		public void tick() {
			this.runs.incrementAndGet();
		}

		int runs() {
			return this.runs.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class YieldOnce {

		@Bean
		ApplicationListener<LeadershipGrantedEvent> yieldOnce(ObjectProvider<DbLockLeaders> leaders) {
			AtomicInteger grants = new AtomicInteger();
			return (event) -> {
				if (grants.incrementAndGet() == 1) {
					leaders.getObject().yield(event.role());
				}
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailOnGrant {

		@Bean
		ApplicationListener<LeadershipGrantedEvent> failOnGrant() {
			return (event) -> {
				throw new IllegalStateException("a broken listener");
			};
		}

	}

	static class ReactiveJobs {

		@LeaderOnly(role = "billing")
		public reactor.core.publisher.Mono<String> run() {
			return reactor.core.publisher.Mono.just("ran");
		}

	}

	static class Both {

		@org.springframework.scheduling.annotation.Scheduled(fixedRate = 3_600_000)
		@LeaderOnly(role = "billing")
		@OncePerSlot
		public void run() {
		}

	}

	static class FinalJobs {

		@LeaderOnly(role = "billing")
		public final int run() {
			return 1;
		}

	}

	/** The events of both instances, in the order they were published. */
	record Order(List<String> lines) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Eager {

		@Bean
		@LeaderRole("billing")
		Poller eager() {
			return new Poller(true);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NotALifecycle {

		@Bean
		@LeaderRole("billing")
		Object plain() {
			return new Object();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OtherRole {

		@Bean
		@LeaderRole("reports")
		Poller reportsPoller() {
			return new Poller(false);
		}

	}

	static class Jobs {

		private final AtomicInteger runs = new AtomicInteger();

		@LeaderOnly(role = "billing")
		public int count() {
			return this.runs.incrementAndGet();
		}

		@LeaderOnly(role = "billing")
		public boolean flag() {
			this.runs.incrementAndGet();
			return true;
		}

		@LeaderOnly(role = "billing")
		public Optional<String> name() {
			this.runs.incrementAndGet();
			return Optional.of("ran");
		}

		@LeaderOnly(role = "billing")
		public Long boxed() {
			return (long) this.runs.incrementAndGet();
		}

		public int runs() {
			return this.runs.get();
		}

	}

	/** Records this instance's events, and in the shared order of both instances if given. */
	static class Events implements ApplicationListener<org.springframework.context.ApplicationEvent> {

		private final List<String> seen = new CopyOnWriteArrayList<>();

		private final List<String> order;

		Events(List<String> order) {
			this.order = order;
		}

		@Override
		public void onApplicationEvent(org.springframework.context.ApplicationEvent event) {
			String line = null;
			if (event instanceof LeadershipGrantedEvent granted) {
				line = "granted " + granted.term();
			}
			else if (event instanceof LeadershipRevokedEvent revoked) {
				line = "revoked " + revoked.term() + " " + revoked.reason();
			}
			if (line != null) {
				this.seen.add(line);
				this.order.add(line);
			}
		}

		List<String> seen() {
			return this.seen;
		}

	}

	static class Poller implements SmartLifecycle {

		private final boolean autoStartup;

		private final AtomicInteger starts = new AtomicInteger();

		private volatile boolean running;

		private volatile List<String> order = new CopyOnWriteArrayList<>();

		Poller(boolean autoStartup) {
			this.autoStartup = autoStartup;
		}

		@Autowired(required = false)
		void setOrder(Order order) {
			this.order = order.lines();
		}

		int starts() {
			return this.starts.get();
		}

		@Override
		public void start() {
			this.starts.incrementAndGet();
			this.order.add("start");
			this.running = true;
		}

		@Override
		public void stop() {
			this.running = false;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public boolean isAutoStartup() {
			return this.autoStartup;
		}

	}

}
