package io.github.dblock.autoconfigure;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import javax.sql.DataSource;

import io.github.dblock.DbLock;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.scheduling.OncePerSlot;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Fails start-up when beans have {@code @DbLock} or {@code @OncePerSlot} methods but no lock
 * engine exists to serve them (no {@code DataSource}, no JDBC on the classpath), instead of
 * letting every such method run without a lock, or on every node.
 */
final class DbLockGuard implements SmartInitializingSingleton {

	private final ConfigurableListableBeanFactory beanFactory;

	DbLockGuard(ConfigurableListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (this.beanFactory.getBeanNamesForType(LockEngine.class, false, false).length > 0) {
			return;
		}
		List<String> locked = lockedMethods();
		List<String> oncePerSlot = annotatedMethods(this.beanFactory, OncePerSlot.class);
		if (locked.isEmpty() && oncePerSlot.isEmpty()) {
			return;
		}
		String[] dataSources = this.beanFactory.getBeanNamesForType(DataSource.class, false, false);
		String why = (dataSources.length == 0) ? "there is no DataSource bean"
				: "db-lock's auto-configuration did not run (DataSource beans: " + Arrays.toString(dataSources) + ")";
		String what = (locked.isEmpty() ? "" : "@DbLock methods " + locked + " would run without a lock")
				+ ((!locked.isEmpty() && !oncePerSlot.isEmpty()) ? " and " : "")
				+ (oncePerSlot.isEmpty() ? "" : "@OncePerSlot methods " + oncePerSlot + " would run on every node");
		throw new DbLockConfigurationException(what + ": no lock engine exists, because " + why + ".",
				(dataSources.length == 0)
						? "Add a database to the application (spring.datasource.url and a JDBC driver, or a DataSource "
								+ "bean), or remove @DbLock. To turn db-lock off on purpose, set db-lock.enabled=false."
						: "Run with --debug and look for DbLockAutoConfiguration in the conditions report; "
								+ "set db-lock.enabled=false to turn db-lock off on purpose.");
	}

	/** The methods of the beans' classes with an annotation, as {@code Type.method}. */
	static List<String> annotatedMethods(ConfigurableListableBeanFactory beanFactory,
			Class<? extends java.lang.annotation.Annotation> annotation) {
		List<String> methods = new ArrayList<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type == null) {
				continue;
			}
			Class<?> userType = ClassUtils.getUserClass(type);
			ReflectionUtils.doWithMethods(userType,
					(Method method) -> methods.add(userType.getSimpleName() + "." + method.getName()),
					(Method method) -> AnnotatedElementUtils.hasAnnotation(method, annotation));
		}
		return methods;
	}

	private List<String> lockedMethods() {
		return lockedMethods(this.beanFactory, (lock) -> true);
	}

	/**
	 * The {@code @DbLock} methods of the beans' classes, as {@code Type.method}.
	 * @param beanFactory the beans
	 * @param which which annotations count
	 * @return the methods
	 */
	static List<String> lockedMethods(ConfigurableListableBeanFactory beanFactory, Predicate<DbLock> which) {
		List<String> locked = new ArrayList<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type == null) {
				continue;
			}
			Class<?> userType = ClassUtils.getUserClass(type);
			ReflectionUtils.doWithMethods(userType, (Method method) -> locked.add(userType.getSimpleName() + "." + method.getName()),
					(Method method) -> {
						DbLock lock = AnnotatedElementUtils.findMergedAnnotation(method, DbLock.class);
						return lock != null && which.test(lock);
					});
		}
		return locked;
	}

}
