package io.github.dblock.autoconfigure.leader;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import io.github.dblock.DbLockException;
import io.github.dblock.LockChecks;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockProperties;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.leader.LeaderOnlyAdvisor;
import io.github.dblock.leader.LeaderRole;
import io.github.dblock.support.DbLockTemplate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Auto-configuration of the leader election: {@link DbLockLeaders} when
 * {@code db-lock.leader.roles} names a role, and the advisor behind
 * {@link io.github.dblock.leader.LeaderOnly} (always, so that a method naming a role that is
 * not configured fails start-up).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockAutoConfiguration.class)
@ConditionalOnBean(DbLockTemplate.class)
@EnableConfigurationProperties(DbLockLeaderProperties.class)
public final class DbLockLeaderAutoConfiguration {

	/**
	 * The order of the {@code @LeaderOnly} advisor: outside {@code @DbLock}'s (by default
	 * {@code Ordered.LOWEST_PRECEDENCE - 100}) and {@code @Transactional}'s, so that an
	 * instance that does not lead takes no lock and begins no transaction.
	 */
	public static final int LEADER_ONLY_ORDER = Ordered.LOWEST_PRECEDENCE - 200;

	private static final String ROLES = "db-lock.leader.roles";

	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnRoles.class)
	DbLockLeaders dbLockLeaders(DbLockTemplate template, LockEngine engine, LockRepository repository,
			DbLockLeaderProperties properties, DbLockProperties lockProperties, ApplicationEventPublisher publisher,
			ConfigurableListableBeanFactory beanFactory) {
		Duration renewal = lockProperties.getWatchdog().getInterval();
		// a renewal may leave up to a quarter of the interval late (the watchdog's tick), and the
		// leader steps down with a quarter of its lease left: 1.25 intervals must stay under 0.75 leases
		if (renewal != null && renewal.multipliedBy(5).compareTo(properties.getLease().multipliedBy(3)) >= 0) {
			throw new DbLockException("db-lock.leader.lease (" + LockChecks.format(properties.getLease())
					+ ") is renewed every db-lock.watchdog.interval (" + LockChecks.format(renewal)
					+ "); a leader steps down with a quarter of its lease left and a renewal may come a quarter "
					+ "of the interval late, so the interval must be under 60% of the lease: lengthen "
					+ "db-lock.leader.lease or shorten db-lock.watchdog.interval");
		}
		return new DbLockLeaders(template, engine, repository, properties.getRoles(), properties.getLease(),
				properties.getPollInterval(), publisher, () -> roleBeans(beanFactory));
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LeaderOnlyAdvisor dbLockLeaderOnlyAdvisor(ObjectProvider<DbLockLeaders> leaders, Environment environment) {
		// bound from the environment: advisors are created before configuration properties beans may be
		List<String> roles = Binder.get(environment).bind(ROLES, Bindable.listOf(String.class)).orElse(List.of());
		return new LeaderOnlyAdvisor(leaders::getObject, new LinkedHashSet<>(roles), LEADER_ONLY_ORDER);
	}

	/**
	 * Fails start-up if a bean is marked {@link LeaderRole} while no role is configured: it
	 * would never start.
	 */
	@Bean
	static SmartInitializingSingleton dbLockLeaderRoleCheck(ConfigurableListableBeanFactory beanFactory,
			Environment environment) {
		return () -> {
			List<String> roles = Binder.get(environment).bind(ROLES, Bindable.listOf(String.class)).orElse(List.of());
			String[] marked = beanFactory.getBeanNamesForAnnotation(LeaderRole.class);
			if (roles.isEmpty() && marked.length > 0) {
				throw new DbLockException("The beans " + List.of(marked) + " are marked @LeaderRole, but "
						+ ROLES + " is empty: they would never start; name their roles there");
			}
		};
	}

	/** The {@link LeaderRole} beans by role, each role's in the order of their phases. */
	private static Map<String, List<SmartLifecycle>> roleBeans(ConfigurableListableBeanFactory beanFactory) {
		Map<String, List<SmartLifecycle>> byRole = new LinkedHashMap<>();
		for (String name : beanFactory.getBeanNamesForAnnotation(LeaderRole.class)) {
			LeaderRole role = beanFactory.findAnnotationOnBean(name, LeaderRole.class);
			Object bean = beanFactory.getBean(name);
			if (role == null) {
				continue;
			}
			if (!(bean instanceof SmartLifecycle lifecycle)) {
				throw new DbLockException("@LeaderRole(\"" + role.value() + "\") on the bean '" + name
						+ "': it is not a SmartLifecycle, so it cannot be started on the leader alone");
			}
			if (lifecycle.isAutoStartup()) {
				throw new DbLockException("@LeaderRole(\"" + role.value() + "\") on the bean '" + name
						+ "': its isAutoStartup() returns true, so the context would start it on every instance; "
						+ "return false");
			}
			byRole.computeIfAbsent(role.value(), (key) -> new ArrayList<>()).add(lifecycle);
		}
		byRole.values().forEach((beans) -> beans.sort(Comparator.comparingInt(SmartLifecycle::getPhase)));
		return byRole;
	}

	/** Matches when {@code db-lock.leader.roles} names at least one role. */
	static final class OnRoles extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			List<String> roles = Binder.get(context.getEnvironment())
				.bind(ROLES, Bindable.listOf(String.class))
				.orElse(List.of());
			return roles.isEmpty() ? ConditionOutcome.noMatch(ROLES + " is empty")
					: ConditionOutcome.match(ROLES + " names " + roles);
		}

	}

}
