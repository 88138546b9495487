/**
 * The background jobs that use the lock engine: the reaper, the recovery job and the lock
 * log's writer, each a {@link org.springframework.context.SmartLifecycle} on the engine's
 * {@link io.github.dblock.engine.LockScheduler}.
 */
@NullMarked
package io.github.dblock.maintenance;

import org.jspecify.annotations.NullMarked;
