package io.github.dblock.leader;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method only on the current leader of a role. On another instance the call returns
 * at once without running the method (logged at DEBUG): it returns {@code null}, or for a
 * method that returns a primitive its default ({@code false}, {@code 0}), for
 * {@code Optional} an empty one. Whether this instance leads is decided once, when the call
 * starts ({@link DbLockLeaders#isLeader(String)}): a leadership that ends during the call
 * does not interrupt it; read {@link DbLockLeaders#term(String)} as a fencing token where a
 * late write must be refused.
 * <p>Works on {@code @Scheduled} methods: every instance fires, the leader runs. The role
 * must be listed in {@code db-lock.leader.roles}, else the application does not start.
 *
 * <pre class="code">
 * &#64;Scheduled(fixedRate = 60_000)
 * &#64;LeaderOnly(role = "billing")
 * public void closeInvoices() { ... }
 * </pre>
 *
 * @since 0.1.0
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

	/**
	 * The role whose leader runs the method: one of {@code db-lock.leader.roles}.
	 * @return the role
	 */
	String role();

}
