package io.github.dblock.leader;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;

import io.github.dblock.DbLockException;
import io.github.dblock.FailurePolicy;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * The advisor that applies {@link LeaderOnly}: its pointcut matches annotated methods and
 * checks, when a bean is created, that each names a configured role; its advice runs the
 * method on the role's leader alone and returns the documented empty value elsewhere.
 *
 * @since 0.1.0
 */
public final class LeaderOnlyAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient LeaderOnlyPointcut pointcut;

	private final transient LeaderOnlyInterceptor interceptor;

	/**
	 * Creates the advisor.
	 * @param leaders supplies the leaders' bean on the first call, so that creating the
	 * advisor early (auto-proxy creators do) creates nothing else early
	 * @param roles the configured roles ({@code db-lock.leader.roles})
	 * @param order the advisor's order
	 */
	public LeaderOnlyAdvisor(Supplier<DbLockLeaders> leaders, Set<String> roles, int order) {
		this.pointcut = new LeaderOnlyPointcut(Set.copyOf(roles));
		this.interceptor = new LeaderOnlyInterceptor(SingletonSupplier.of(leaders), this.pointcut);
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	private static final class LeaderOnlyPointcut extends StaticMethodMatcherPointcut {

		private final Set<String> roles;

		/** Each method's role, or empty for a method without the annotation. */
		private final ConcurrentMap<MethodClassKey, Optional<String>> cache = new ConcurrentHashMap<>();

		LeaderOnlyPointcut(Set<String> roles) {
			this.roles = roles;
			setClassFilter(this::check);
		}

		/** Checks every annotated method of a class when it is first matched; whether it has one. */
		private boolean check(Class<?> targetClass) {
			if (!AnnotationUtils.isCandidateClass(targetClass, LeaderOnly.class)) {
				return false;
			}
			boolean any = false;
			for (Method method : ClassUtils.getUserClass(targetClass).getMethods()) {
				any |= role(method, targetClass).isPresent();
			}
			for (Method method : ClassUtils.getUserClass(targetClass).getDeclaredMethods()) {
				any |= role(method, targetClass).isPresent();
			}
			return any;
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return role(method, targetClass).isPresent();
		}

		/** The role of an annotated method (cached), empty for another (not cached). */
		Optional<String> role(Method method, @Nullable Class<?> targetClass) {
			MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
			Optional<String> known = this.cache.get(cacheKey);
			if (known != null) {
				return known;
			}
			Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
			LeaderOnly annotation = AnnotatedElementUtils.findMergedAnnotation(specific, LeaderOnly.class);
			if (annotation == null) {
				return Optional.empty();
			}
			return this.cache.computeIfAbsent(cacheKey, (key) -> {
				String description = "@LeaderOnly on " + specific.getDeclaringClass().getName() + "."
						+ specific.getName();
				int modifiers = specific.getModifiers();
				if (Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers) || Modifier.isFinal(modifiers)) {
					throw new DbLockException(description + ": a private, static or final method cannot be "
							+ "intercepted, so it would run on every instance; make it public (or protected), "
							+ "not static and not final");
				}
				if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(specific.getReturnType()) != null
						|| KotlinDetector.isSuspendingFunction(specific)) {
					throw new DbLockException(description + ": a reactive or suspending method returns its work to "
							+ "be run later (a @Scheduled one is called once, at start-up), so whether this instance "
							+ "leads would be decided too early; return a plain value");
				}
				if (annotation.role().isBlank()) {
					throw new DbLockException(description + ": role must not be blank");
				}
				if (!this.roles.contains(annotation.role())) {
					throw new DbLockException(description + ": the role '" + annotation.role()
							+ "' is not in db-lock.leader.roles " + this.roles + "; add it there");
				}
				return Optional.of(annotation.role());
			});
		}

	}

	private static final class LeaderOnlyInterceptor implements MethodInterceptor {

		private static final Log logger = LogFactory.getLog(LeaderOnlyAdvisor.class);

		private final Supplier<DbLockLeaders> leaders;

		private final LeaderOnlyPointcut pointcut;

		LeaderOnlyInterceptor(Supplier<DbLockLeaders> leaders, LeaderOnlyPointcut pointcut) {
			this.leaders = leaders;
			this.pointcut = pointcut;
		}

		@Override
		public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
			Object target = invocation.getThis();
			Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
			Method method = invocation.getMethod();
			Optional<String> role = this.pointcut.role(method, targetClass);
			if (role.isEmpty() || this.leaders.get().isLeader(role.get())) {
				return invocation.proceed();
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Not running " + method.getDeclaringClass().getSimpleName() + "." + method.getName()
						+ ": this instance does not lead the role '" + role.get() + "'");
			}
			return FailurePolicy.skippedResult(method.getReturnType());
		}


	}

}
