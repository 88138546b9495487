package io.github.dblock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockChecks;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.expression.ParseException;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds {@code @DbLock} methods and turns each annotation into a {@link DbLockOperation}
 * once. A class is checked as a whole when its bean is created, so that a bad attribute
 * fails start-up rather than the first call.
 */
final class DbLockOperationSource {

	private static final Log logger = LogFactory.getLog(DbLockOperationSource.class);

	private final KeyExpressionEvaluator evaluator;

	private final Map<MethodClassKey, Optional<DbLockOperation>> operations = new ConcurrentHashMap<>(64);

	private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>(64);

	DbLockOperationSource(KeyExpressionEvaluator evaluator) {
		this.evaluator = evaluator;
	}

	/**
	 * Checks every {@code @DbLock} method of a class.
	 * @return whether the class has a method to intercept
	 * @throws DbLockException naming the method and attribute that is invalid
	 */
	boolean hasOperations(Class<?> targetClass) {
		return this.checkedClasses.computeIfAbsent(ClassUtils.getUserClass(targetClass), this::checkClass);
	}

	@Nullable DbLockOperation getOperation(Method method, Class<?> targetClass) {
		return this.operations
			.computeIfAbsent(new MethodClassKey(method, targetClass),
					(key) -> Optional.ofNullable(createOperation(method, ClassUtils.getUserClass(targetClass))))
			.orElse(null);
	}

	private boolean checkClass(Class<?> targetClass) {
		if (!AnnotationUtils.isCandidateClass(targetClass, DbLock.class)) {
			return false;
		}
		boolean[] found = new boolean[1];
		ReflectionUtils.doWithMethods(targetClass, (method) -> {
			int modifiers = method.getModifiers();
			if (Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers) || Modifier.isStatic(modifiers)) {
				logger.warn("@DbLock on " + describe(method, targetClass) + " has no effect: Spring's proxy cannot "
						+ "intercept a private, final or static method, so no lock is taken");
				return;
			}
			found[0] |= getOperation(method, targetClass) != null;
		}, (method) -> !method.isBridge() && !method.isSynthetic()
				&& AnnotatedElementUtils.hasAnnotation(method, DbLock.class));
		return found[0];
	}

	private @Nullable DbLockOperation createOperation(Method method, Class<?> targetClass) {
		Method specificMethod = AopUtils.getMostSpecificMethod(method, targetClass);
		DbLock annotation = AnnotatedElementUtils.findMergedAnnotation(specificMethod, DbLock.class);
		if (annotation == null) {
			return null;
		}
		String description = describe(specificMethod, targetClass);
		String name = annotation.name().isEmpty() ? targetClass.getSimpleName() + "." + specificMethod.getName()
				: annotation.name();
		if (!LockChecks.isValidKey(name)) {
			throw invalid(description, "name must not be blank", null);
		}
		AnnotatedElementKey methodKey = new AnnotatedElementKey(specificMethod, targetClass);
		String key = annotation.key().isEmpty() ? null : annotation.key();
		List<String> keys = List.of(annotation.keys());
		if (key != null && !keys.isEmpty()) {
			throw invalid(description, "key and keys are exclusive: name one key with key, or several with keys", null);
		}
		if (keys.stream().anyMatch(String::isBlank)) {
			throw invalid(description, "keys " + quoted(keys) + " has a blank expression; each names a key", null);
		}
		if (new HashSet<>(keys).size() != keys.size()) {
			throw invalid(description, "keys " + quoted(keys) + " names a key twice", null);
		}
		if (!keys.isEmpty() && !LockChecks.allowsSeveralKeys(annotation.mode())) {
			throw invalid(description, "keys cannot be taken together in the " + annotation.mode() + " mode: "
					+ LockChecks.SEVERAL_KEYS_RULE, null);
		}
		if (!keys.isEmpty() && annotation.minHoldMs() != 0) {
			throw invalid(description, "minHoldMs applies to one key; keys taken together are released together", null);
		}
		if (annotation.permits() < 1) {
			throw invalid(description, "permits must be at least 1, got " + annotation.permits(), null);
		}
		if (!LockChecks.allowsPermits(annotation.mode(), annotation.permits())) {
			throw invalid(description, "permits = " + annotation.permits() + " is the SEMAPHORE mode's alone; a lock in the "
					+ annotation.mode() + " mode has one holder at a time (permits = 1)", null);
		}
		List<String> expressions = new ArrayList<>(keys);
		if (key != null) {
			expressions.add(key);
		}
		for (String expression : expressions) {
			checkExpression(expression, methodKey, specificMethod, description);
		}
		String asynchronous = asynchronousResult(specificMethod, targetClass);
		if (asynchronous != null) {
			throw invalid(description, "it returns " + asynchronous + ", so the lock would be released when the "
					+ "method returns, before the work it started completes. Take the lock inside that work "
					+ "(DbLockTemplate.execute in the task), or make the method @Async so that the lock is held on "
					+ "the task's thread", null);
		}
		if (annotation.waitMs() != -1 && !LockChecks.isValidWait(Duration.ofMillis(annotation.waitMs()))) {
			throw invalid(description,
					"waitMs must be -1 (db-lock.default-wait), 0 (do not wait) or positive, got " + annotation.waitMs(),
					null);
		}
		if (annotation.leaseMs() != -1 && !LockChecks.isValidLease(Duration.ofMillis(annotation.leaseMs()))) {
			throw invalid(description,
					"leaseMs must be -1 (db-lock.default-lease) or positive, got " + annotation.leaseMs(), null);
		}
		if (!LockChecks.isValidMinimumHold(Duration.ofMillis(annotation.minHoldMs()))) {
			throw invalid(description, "minHoldMs must be 0 (none) or positive, got " + annotation.minHoldMs(), null);
		}
		if (!LockChecks.allowsLease(annotation.mode(), millisOrDefault(annotation.leaseMs()))
				|| (!annotation.mode().hasLease() && annotation.minHoldMs() != 0)) {
			throw invalid(description, "leaseMs and minHoldMs are the lease, read/write, fair and semaphore modes' alone; a lock in the "
					+ annotation.mode() + " mode has no lease", null);
		}
		if (!LockChecks.allowsMinimumHold(annotation.mode(), Duration.ofMillis(annotation.minHoldMs()))) {
			throw invalid(description, "minHoldMs is the lease mode's alone; a lock in the " + annotation.mode()
					+ " mode ends when it is released", null);
		}
		if (annotation.mode() == DbLockMode.TRANSACTION) {
			String refused = transactionRefused(specificMethod, targetClass);
			if (refused != null) {
				throw invalid(description, "mode = TRANSACTION needs the transaction the method runs in, but it is "
						+ refused, null);
			}
		}
		DbLockOperation.Fallback fallback = annotation.fallback().isEmpty() ? null
				: findFallback(annotation.fallback(), specificMethod, targetClass, description);
		return new DbLockOperation(description, methodKey, name, key, keys, millisOrDefault(annotation.waitMs()),
				millisOrDefault(annotation.leaseMs()), Duration.ofMillis(annotation.minHoldMs()), annotation.onFailure(),
				fallback, annotation.mode(), annotation.permits());
	}

	private void checkExpression(String key, AnnotatedElementKey methodKey, Method method, String description) {
		try {
			this.evaluator.parse(key, methodKey);
		}
		catch (ParseException ex) {
			throw invalid(description, "key \"" + key + "\" is not a valid SpEL expression: " + ex.getMessage(), ex);
		}
		List<String> unknown = this.evaluator.unknownVariables(key, methodKey, method);
		if (!unknown.isEmpty()) {
			throw invalid(description, unknownVariables(key, unknown, this.evaluator.parameterNames(method)), null);
		}
	}

	private static String quoted(List<String> keys) {
		return keys.stream().map((key) -> "\"" + key + "\"").collect(Collectors.joining(", ", "{", "}"));
	}

	/** How a method's own {@code @Transactional} rules out a transaction, if it does. */
	private static @Nullable String transactionRefused(Method method, Class<?> targetClass) {
		Transactional transactional = AnnotatedElementUtils.findMergedAnnotation(method, Transactional.class);
		if (transactional == null) {
			transactional = AnnotatedElementUtils.findMergedAnnotation(targetClass, Transactional.class);
		}
		if (transactional == null) {
			return null;
		}
		Propagation propagation = transactional.propagation();
		return (propagation == Propagation.NEVER || propagation == Propagation.NOT_SUPPORTED)
				? "@Transactional(propagation = " + propagation + "), which runs it without one" : null;
	}

	private static DbLockOperation.Fallback findFallback(String name, Method method, Class<?> targetClass,
			String description) {
		Class<?>[] parameters = method.getParameterTypes();
		for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(targetClass)) {
			if (!candidate.getName().equals(name) || Modifier.isStatic(candidate.getModifiers())
					|| !ClassUtils.resolvePrimitiveIfNecessary(method.getReturnType())
						.isAssignableFrom(ClassUtils.resolvePrimitiveIfNecessary(candidate.getReturnType()))) {
				continue;
			}
			Class<?>[] types = candidate.getParameterTypes();
			if (Arrays.equals(types, parameters)) {
				return accessible(candidate, false);
			}
			if (types.length == parameters.length + 1 && Arrays.equals(Arrays.copyOf(types, parameters.length), parameters)
					&& types[parameters.length].isAssignableFrom(LockAcquisitionException.class)) {
				return accessible(candidate, true);
			}
		}
		String parameterList = Arrays.stream(parameters).map(Class::getSimpleName).collect(Collectors.joining(", "));
		throw invalid(description, "fallback \"" + name + "\" names no method " + name + "(" + parameterList + ") or "
				+ name + "(" + parameterList + (parameterList.isEmpty() ? "" : ", ")
				+ "LockAcquisitionException) returning " + method.getReturnType().getSimpleName() + " in "
				+ targetClass.getSimpleName(), null);
	}

	private static DbLockOperation.Fallback accessible(Method method, boolean takesException) {
		ReflectionUtils.makeAccessible(method);
		return new DbLockOperation.Fallback(method, takesException);
	}

	private static @Nullable Duration millisOrDefault(long millis) {
		return (millis == -1) ? null : Duration.ofMillis(millis);
	}

	private static String unknownVariables(String key, List<String> unknown, String @Nullable [] names) {
		String refers = "key \"" + key + "\" refers to #" + String.join(", #", unknown);
		if (names == null) {
			return refers + ", but the method's parameter names are not known: compile with -parameters "
					+ "(Spring Boot's Maven and Gradle plugins do), or refer to parameters by position (#p0, #p1, ...)";
		}
		return refers + ", which " + ((unknown.size() == 1) ? "is not a parameter" : "are not parameters")
				+ " of the method; its parameters are " + ((names.length == 0) ? "none" : "#" + String.join(", #", names))
				+ " (or #p0, #p1, ... by position)";
	}

	/** Types whose value stands for work that may go on after the method returned. */
	private static final String[] ASYNCHRONOUS_TYPES = { "java.util.concurrent.Future",
			"java.util.concurrent.CompletionStage", "org.reactivestreams.Publisher",
			"kotlinx.coroutines.flow.Flow" };

	/**
	 * The simple name of a method's asynchronous return type, unless the method runs as
	 * {@code @Async}, where the advice runs on the task's thread around the work itself.
	 */
	private static @Nullable String asynchronousResult(Method method, Class<?> targetClass) {
		if (AnnotatedElementUtils.hasAnnotation(method, org.springframework.scheduling.annotation.Async.class)
				|| AnnotatedElementUtils.hasAnnotation(targetClass, org.springframework.scheduling.annotation.Async.class)) {
			return null;
		}
		ClassLoader loader = method.getDeclaringClass().getClassLoader();
		for (String type : ASYNCHRONOUS_TYPES) {
			if (ClassUtils.isPresent(type, loader)
					&& ClassUtils.resolveClassName(type, loader).isAssignableFrom(method.getReturnType())) {
				return method.getReturnType().getSimpleName();
			}
		}
		return null;
	}

	private static DbLockException invalid(String method, String problem, @Nullable Throwable cause) {
		String message = "Invalid @DbLock on " + method + ": " + problem;
		return (cause != null) ? new DbLockException(message, cause) : new DbLockException(message);
	}

	static String describe(Method method, Class<?> targetClass) {
		return targetClass.getSimpleName() + "." + method.getName() + Arrays.stream(method.getParameterTypes())
			.map(Class::getSimpleName)
			.collect(Collectors.joining(", ", "(", ")"));
	}

}
