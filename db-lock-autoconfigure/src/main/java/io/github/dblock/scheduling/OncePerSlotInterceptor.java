package io.github.dblock.scheduling;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import io.github.dblock.DbLockException;
import io.github.dblock.FailurePolicy;
import io.github.dblock.jdbc.SlotClaim;
import io.github.dblock.jdbc.SlotRepository;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Claims the slot of a {@code @OncePerSlot} method's call, and runs the method only if the
 * claim is this call's: a slot claimed by another call, or a claim that failed or whose
 * outcome is unknown, returns without running it.
 */
final class OncePerSlotInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(OncePerSlotInterceptor.class);

	private final OncePerSlotOperationSource operationSource;

	private final Supplier<SlotRepository> slots;

	private final Duration retention;

	/** This JVM's name in the slots it claims: host, process and a random instance id. */
	private final Supplier<String> owner = SingletonSupplier.of(OncePerSlotInterceptor::owner);

	OncePerSlotInterceptor(OncePerSlotOperationSource operationSource, Supplier<SlotRepository> slots,
			Duration retention) {
		this.operationSource = operationSource;
		this.slots = slots;
		this.retention = retention;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		OncePerSlotOperation operation = this.operationSource.getOperation(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		SlotSchedule schedule = operation.schedule();
		if (schedule == null) {
			throw new DbLockException("@OncePerSlot on " + operation.method() + ": its @Scheduled cron is disabled "
					+ "(\"-\"), so it has no slots to run in; not run");
		}
		SlotClaim claim;
		try {
			claim = this.slots.get().claim(operation.task(), this.owner.get(), schedule::slotAt,
					schedule.retention(this.retention));
		}
		catch (RuntimeException ex) {
			// the claim may have been written: at most once, so taken as claimed
			logger.warn("@OncePerSlot on " + operation.method() + ": not run, its slot's claim failed and may have "
					+ "been written (" + ex.getMessage() + "); the slot is taken as claimed", ex);
			return FailurePolicy.skippedResult(invocation.getMethod().getReturnType());
		}
		if (!claim.claimed()) {
			if (logger.isDebugEnabled()) {
				logger.debug("@OncePerSlot on " + operation.method() + ": not run, slot " + claim.slot() + " of task '"
						+ operation.task() + "' (database time " + claim.databaseTime() + ") was claimed by another run");
			}
			return FailurePolicy.skippedResult(invocation.getMethod().getReturnType());
		}
		if (logger.isDebugEnabled()) {
			logger.debug("@OncePerSlot on " + operation.method() + ": runs slot " + claim.slot() + " of task '"
					+ operation.task() + "' (database time " + claim.databaseTime() + ")");
		}
		return invocation.proceed();
	}


	private static String owner() {
		String host;
		try {
			host = InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			host = "unknown-host";
		}
		if (host.length() > 64) {
			host = host.substring(0, 64);
		}
		return host + "/" + ProcessHandle.current().pid() + "/"
				+ HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
	}

}
