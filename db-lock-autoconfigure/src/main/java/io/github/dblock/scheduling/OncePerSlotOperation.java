package io.github.dblock.scheduling;

import org.jspecify.annotations.Nullable;

/**
 * A {@code @OncePerSlot} method's task and schedule, read once per method.
 *
 * @param method names the method in messages: {@code Reports.nightly()}
 * @param task the task's stored name (with the key prefix)
 * @param schedule the slots of its {@code @Scheduled}, or {@code null} for a cron that is
 * disabled ({@code "-"}): Spring never calls it
 */
record OncePerSlotOperation(String method, String task, @Nullable SlotSchedule schedule) {
}
