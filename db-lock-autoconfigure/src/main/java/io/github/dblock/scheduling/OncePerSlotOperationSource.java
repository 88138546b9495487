package io.github.dblock.scheduling;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.dblock.DbLockException;
import io.github.dblock.LockChecks;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.format.annotation.DurationFormat;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

/**
 * Finds {@code @OncePerSlot} methods and reads each one's {@code @Scheduled} into a
 * {@link OncePerSlotOperation} once, resolving placeholders as Spring's scheduling does. A
 * class is checked as a whole when its bean is created, so that a method whose schedule
 * cannot be read fails start-up, named.
 */
final class OncePerSlotOperationSource {

	private final @Nullable StringValueResolver resolver;

	private final String keyPrefix;

	private final int maxTaskLength;

	private final Map<MethodClassKey, Optional<OncePerSlotOperation>> operations = new ConcurrentHashMap<>(16);

	private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>(64);

	/**
	 * @param resolver resolves {@code ${...}} placeholders (and {@code #{...}} expressions) in
	 * {@code @Scheduled}'s attributes, or {@code null} to read them as they are
	 * @param keyPrefix put before every task's name
	 * @param maxTaskLength the longest stored task name
	 */
	OncePerSlotOperationSource(@Nullable StringValueResolver resolver, String keyPrefix, int maxTaskLength) {
		this.resolver = resolver;
		this.keyPrefix = keyPrefix;
		this.maxTaskLength = maxTaskLength;
	}

	/**
	 * Checks every {@code @OncePerSlot} method of a class.
	 * @return whether the class has a method to intercept
	 * @throws DbLockException naming the method whose schedule cannot be read
	 */
	boolean hasOperations(Class<?> targetClass) {
		return this.checkedClasses.computeIfAbsent(ClassUtils.getUserClass(targetClass), this::checkClass);
	}

	@Nullable OncePerSlotOperation getOperation(Method method, Class<?> targetClass) {
		return this.operations
			.computeIfAbsent(new MethodClassKey(method, targetClass),
					(key) -> Optional.ofNullable(createOperation(method, ClassUtils.getUserClass(targetClass))))
			.orElse(null);
	}

	/**
	 * The {@code @OncePerSlot} methods found so far (every one of the beans created), as
	 * {@code Type.method(parameters)}, sorted.
	 */
	List<String> methods() {
		return this.operations.values()
			.stream()
			.flatMap(Optional::stream)
			.map(OncePerSlotOperation::method)
			.distinct()
			.sorted()
			.toList();
	}

	private boolean checkClass(Class<?> targetClass) {
		if (!AnnotationUtils.isCandidateClass(targetClass, OncePerSlot.class)) {
			return false;
		}
		boolean[] found = new boolean[1];
		ReflectionUtils.doWithMethods(targetClass, (method) -> {
			int modifiers = method.getModifiers();
			if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
				throw invalid(describe(method, targetClass), "Spring's proxy cannot intercept a private, final or "
						+ "static method, so every node would run every call; make it public (or protected) and "
						+ "not final", null);
			}
			found[0] |= getOperation(method, targetClass) != null;
		}, (method) -> !method.isBridge() && !method.isSynthetic()
				&& AnnotatedElementUtils.hasAnnotation(method, OncePerSlot.class));
		return found[0];
	}

	private @Nullable OncePerSlotOperation createOperation(Method method, Class<?> targetClass) {
		Method specificMethod = AopUtils.getMostSpecificMethod(method, targetClass);
		OncePerSlot annotation = AnnotatedElementUtils.findMergedAnnotation(specificMethod, OncePerSlot.class);
		if (annotation == null) {
			return null;
		}
		String description = describe(specificMethod, targetClass);
		if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(specificMethod.getReturnType()) != null
				|| KotlinDetector.isSuspendingFunction(specificMethod)) {
			throw invalid(description, "a reactive or suspending @Scheduled method is called once, at start-up, "
					+ "and its publisher subscribed to at every run, so no run could claim its slot; return void",
					null);
		}
		String name = annotation.name().isEmpty() ? targetClass.getSimpleName() + "." + specificMethod.getName()
				: annotation.name();
		if (!LockChecks.isValidKey(name)) {
			throw invalid(description, "name must not be blank", null);
		}
		String task = this.keyPrefix + name;
		if (task.length() > this.maxTaskLength) {
			throw invalid(description, "the task's name \"" + task + "\" has " + task.length()
					+ " characters, more than the slot table's " + this.maxTaskLength, null);
		}
		Set<Scheduled> scheduled = AnnotatedElementUtils.getMergedRepeatableAnnotations(specificMethod, Scheduled.class,
				Schedules.class);
		if (scheduled.isEmpty()) {
			throw invalid(description, "the method has no @Scheduled, whose schedule defines the slots; put "
					+ "@OncePerSlot next to @Scheduled", null);
		}
		if (scheduled.size() > 1) {
			throw invalid(description, "the method has " + scheduled.size() + " @Scheduled annotations, whose runs "
					+ "would share the slots of one; give each schedule a method of its own", null);
		}
		SlotSchedule schedule = schedule(scheduled.iterator().next(), description);
		return new OncePerSlotOperation(description, task, schedule);
	}

	/** The slots of a {@code @Scheduled}, or {@code null} for a disabled cron. */
	private @Nullable SlotSchedule schedule(Scheduled scheduled, String description) {
		String cron = resolve(scheduled.cron(), description);
		String fixedRate = period("fixedRate", scheduled.fixedRate(), scheduled.fixedRateString(), description);
		String fixedDelay = period("fixedDelay", scheduled.fixedDelay(), scheduled.fixedDelayString(), description);
		List<String> triggers = new ArrayList<>();
		if (StringUtils.hasText(cron)) {
			triggers.add("cron");
		}
		if (fixedRate != null) {
			triggers.add("fixedRate");
		}
		if (fixedDelay != null) {
			triggers.add("fixedDelay");
		}
		if (triggers.size() != 1) {
			throw invalid(description, "its @Scheduled must have exactly one of cron, fixedRate and fixedDelay, "
					+ (triggers.isEmpty() ? "it has none (a task run once has no slots)" : "it has " + triggers), null);
		}
		if (StringUtils.hasText(cron)) {
			if (Scheduled.CRON_DISABLED.equals(cron)) {
				return null;
			}
			ZoneId zone;
			String zoneName = resolve(scheduled.zone(), description);
			try {
				zone = StringUtils.hasText(zoneName) ? ZoneId.of(zoneName) : TimeZone.getDefault().toZoneId();
			}
			catch (DateTimeException ex) {
				throw invalid(description, "its @Scheduled(zone = \"" + zoneName + "\") is not a time zone: "
						+ ex.getMessage(), ex);
			}
			try {
				return SlotSchedule.cron(cron, zone);
			}
			catch (IllegalArgumentException ex) {
				throw invalid(description, "its @Scheduled(cron = \"" + cron + "\") is not a cron expression: "
						+ ex.getMessage(), ex);
			}
		}
		String attribute = (fixedRate != null) ? "fixedRate" : "fixedDelay";
		String value = (fixedRate != null) ? fixedRate : fixedDelay;
		Duration period;
		try {
			period = duration(value, scheduled.timeUnit());
		}
		catch (RuntimeException ex) {
			throw invalid(description, "its @Scheduled(" + attribute + " = \"" + value + "\") is not a duration: "
					+ ex.getMessage(), ex);
		}
		if (period.isNegative() || period.isZero()) {
			throw invalid(description, "its @Scheduled(" + attribute + ") must be positive, got " + period, null);
		}
		return SlotSchedule.every(period);
	}

	/** A period attribute's value as text, or {@code null} where it is not set. */
	private @Nullable String period(String attribute, long value, String text, String description) {
		if (value >= 0) {
			if (StringUtils.hasText(text)) {
				throw invalid(description, "its @Scheduled sets both " + attribute + " and " + attribute + "String", null);
			}
			return Long.toString(value);
		}
		String resolved = resolve(text, description);
		return StringUtils.hasText(resolved) ? resolved.strip() : null;
	}

	/** A duration as Spring's scheduling reads it: ISO-8601, simple ({@code 5s}), or a number in the unit. */
	private static Duration duration(String value, TimeUnit unit) {
		return DurationFormatterUtils.detectAndParse(value, DurationFormat.Unit.fromChronoUnit(unit.toChronoUnit()));
	}

	private String resolve(String value, String description) {
		if (this.resolver == null || value.isEmpty()) {
			return value;
		}
		String resolved;
		try {
			resolved = this.resolver.resolveStringValue(value);
		}
		catch (RuntimeException ex) {
			throw invalid(description, "its @Scheduled's \"" + value + "\" could not be resolved: " + ex.getMessage(), ex);
		}
		return (resolved != null) ? resolved : "";
	}

	private static DbLockException invalid(String method, String problem, @Nullable Throwable cause) {
		String message = "Invalid @OncePerSlot on " + method + ": " + problem;
		return (cause != null) ? new DbLockException(message, cause) : new DbLockException(message);
	}

	static String describe(Method method, Class<?> targetClass) {
		return targetClass.getSimpleName() + "." + method.getName() + Arrays.stream(method.getParameterTypes())
			.map(Class::getSimpleName)
			.collect(Collectors.joining(", ", "(", ")"));
	}

}
