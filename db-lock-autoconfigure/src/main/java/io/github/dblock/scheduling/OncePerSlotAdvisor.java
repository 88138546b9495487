package io.github.dblock.scheduling;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import io.github.dblock.jdbc.SlotRepository;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.util.StringValueResolver;
import org.springframework.util.function.SingletonSupplier;

/**
 * The advisor that applies {@link OncePerSlot}: its pointcut matches annotated methods (and
 * checks every one of a bean's class when the bean is created, so that a schedule that
 * cannot be read fails start-up), its advice claims the call's slot and runs the method only
 * if the claim is the call's. Spring's scheduler calls a {@code @Scheduled} method through
 * the bean's proxy, so the advice runs for every scheduled run.
 *
 * @since 0.1.0
 */
public final class OncePerSlotAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient OncePerSlotPointcut pointcut;

	private final transient OncePerSlotInterceptor interceptor;

	private final transient OncePerSlotOperationSource operationSource;

	/**
	 * Creates the advisor.
	 * @param slots supplies the slots' storage on the first call, so that creating the
	 * advisor early (auto-proxy creators do) does not create the data source early
	 * @param resolver resolves placeholders in {@code @Scheduled}'s attributes as Spring's
	 * scheduling does (the bean factory's embedded value resolver), or {@code null}
	 * @param keyPrefix put before every task's name ({@code db-lock.key-prefix})
	 * @param maxTaskLength the longest stored task name
	 * @param retention how long before a task's claimed slot its older slots are kept
	 * @param order the advisor's order
	 */
	public OncePerSlotAdvisor(Supplier<SlotRepository> slots, @Nullable StringValueResolver resolver, String keyPrefix,
			int maxTaskLength, Duration retention, int order) {
		OncePerSlotOperationSource operationSource = new OncePerSlotOperationSource(resolver, keyPrefix, maxTaskLength);
		this.interceptor = new OncePerSlotInterceptor(operationSource, SingletonSupplier.of(slots), retention);
		this.pointcut = new OncePerSlotPointcut(operationSource);
		this.operationSource = operationSource;
		setOrder(order);
	}

	/**
	 * The {@code @OncePerSlot} methods of the beans proxied so far, as
	 * {@code Type.method(parameters)}, sorted: after start-up, every one.
	 * @return the methods
	 */
	public List<String> methods() {
		return this.operationSource.methods();
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	private static final class OncePerSlotPointcut extends StaticMethodMatcherPointcut {

		private final OncePerSlotOperationSource operationSource;

		OncePerSlotPointcut(OncePerSlotOperationSource operationSource) {
			this.operationSource = operationSource;
			setClassFilter(operationSource::hasOperations);
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return this.operationSource.getOperation(method, targetClass) != null;
		}

	}

}
