/**
 * ShedLock over db-lock: a ShedLock {@code LockProvider} whose locks are db-lock's leases,
 * so that {@code @SchedulerLock} jobs gain the database's time, fencing tokens, lost-lease
 * reports and db-lock's meters by replacing one bean.
 */
@NullMarked
package io.github.dblock.shedlock;

import org.jspecify.annotations.NullMarked;
