package io.github.dblock;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while holding a database lock. The stored key is
 * {@code [key-prefix:]name:keyValue}: calls with the same name and key value exclude each
 * other across threads, application instances and nodes.
 *
 * <pre class="code">
 * &#64;DbLock(key = "#orderId", waitMs = 3000, leaseMs = 30000)
 * public Receipt pay(long orderId, Money amount) { ... }
 * </pre>
 *
 * In the default {@link DbLockMode#LEASE lease mode}, the lock is taken before, and
 * released after, a {@code @Transactional} on the same method: the next holder sees
 * committed data. In the {@link DbLockMode#TRANSACTION transaction mode} it is taken inside
 * the transaction and ends with it. Spring proxies the bean, so the method
 * must be public or protected, not final or static, and be called through the proxy
 * (not from within the same object).
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DbLock {

	/**
	 * SpEL over the method's arguments and beans: {@code #orderId}, {@code #p0},
	 * {@code #order.id}, {@code @ids.next()}. Parsed once, at start-up. Empty: the lock is
	 * the {@link #name()} alone. Parameter names such as {@code #orderId} need the
	 * {@code -parameters} compiler flag; {@code #p0}/{@code #a0} always work.
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * Several keys taken at once, instead of {@link #key()}: SpEL each, as {@code key} is,
	 * each giving the stored key {@code [key-prefix:]name:value}. The lock holds them all or
	 * none: they are taken in the order of their stored keys, whatever the order here, so
	 * that two methods naming the same keys in opposite orders never deadlock; the wait
	 * covers them all, and a key that stays held past it releases those already taken. Keys
	 * whose values are equal in a call are taken once. Each key has its own fencing token
	 * ({@link LockHandle#fencingToken(String)} of the handle, and each key's handle in
	 * {@link DbLockContext#all()}). Every mode but {@link DbLockMode#TRANSACTION} and
	 * {@link DbLockMode#SEMAPHORE} can take part; not with {@link #minHoldMs()}. Empty (the
	 * default): the lock has one key, {@link #key()}.
	 * <pre class="code">
	 * &#64;DbLock(name = "account", keys = { "#from", "#to" })
	 * public void transfer(long from, long to, Money amount) { ... }
	 * </pre>
	 * @return the key expressions, distinct and not blank; not with {@link #key()}
	 */
	String[] keys() default {};

	/**
	 * The lock's namespace. Methods that must exclude each other (pay and refund of one
	 * order) share a name. Empty: {@code SimpleClassName.methodName}.
	 * @return the name
	 */
	String name() default "";

	/**
	 * How long to wait for the lock, in milliseconds: -1 for {@code db-lock.default-wait},
	 * 0 to give up at once when it is held.
	 * @return the wait
	 */
	long waitMs() default -1;

	/**
	 * How the lock is held: a lease (the default), a row lock of the caller's transaction,
	 * the database server's named lock, a reader's or writer's lease of a read/write lock, a
	 * ticket in a fair queue, or a permit of a semaphore. See {@link DbLockMode} for what each
	 * survives and needs. {@link #leaseMs()} is the lease, read/write, fair and semaphore
	 * modes' alone, {@link #minHoldMs()} the lease mode's, {@link #permits()} the semaphore
	 * mode's.
	 * @return the mode
	 */
	DbLockMode mode() default DbLockMode.LEASE;

	/**
	 * The lease, in milliseconds: -1 for {@code db-lock.default-lease}, else a positive
	 * lease after which the lock expires even if the method still runs.
	 * @return the lease
	 */
	long leaseMs() default -1;

	/**
	 * The least time the lock stays taken after acquisition, in milliseconds, even if the
	 * method returns sooner: for a {@code @Scheduled} job, so that nodes whose clocks or
	 * schedules differ a little do not run it twice (ShedLock's {@code lockAtLeastFor}).
	 * The lease then ends on its own; no thread waits for it. 0 for none.
	 * @return the minimum hold
	 */
	long minHoldMs() default 0;

	/**
	 * How many callers hold the lock at once, in the {@link DbLockMode#SEMAPHORE semaphore
	 * mode}: {@code @DbLock(mode = DbLockMode.SEMAPHORE, key = "'exports'", permits = 3)}
	 * runs the method at most three times at once across the cluster. Every caller of a key
	 * must ask for the same number (recorded per key at its first use: another number fails
	 * the call). Must be 1 (the default) in every other mode.
	 * @return the number of permits, at least 1
	 */
	int permits() default 1;

	/**
	 * What to do when the lock stays held by another owner for the whole wait, unless a
	 * {@link #fallback()} is named.
	 * @return the policy
	 */
	FailurePolicy onFailure() default FailurePolicy.THROW;

	/**
	 * The name of a method of the same bean to call instead when the lock cannot be had:
	 * it takes the same parameters, optionally followed by the
	 * {@link LockAcquisitionException}, and returns a compatible type. Checked at start-up.
	 * Empty for none.
	 * @return the fallback method's name
	 */
	String fallback() default "";

}
