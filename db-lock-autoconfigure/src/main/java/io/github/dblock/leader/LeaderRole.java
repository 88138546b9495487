package io.github.dblock.leader;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code SmartLifecycle} bean (its class, or its {@code @Bean} method) as run by the
 * leader of a role only: {@link DbLockLeaders} starts it when this instance is granted the
 * role and stops it when the leadership is revoked, after the
 * {@link LeadershipRevokedEvent}. The bean's {@code isAutoStartup()} must return
 * {@code false} (else the context would start it on every instance) and the role must be
 * listed in {@code db-lock.leader.roles}; otherwise the application does not start.
 *
 * @since 0.1.0
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderRole {

	/**
	 * The role whose leader runs the bean: one of {@code db-lock.leader.roles}.
	 * @return the role
	 */
	String value();

}
