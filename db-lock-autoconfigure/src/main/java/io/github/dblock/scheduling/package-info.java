/**
 * Scheduled jobs that run at most once per schedule slot across the nodes of an
 * application: {@link io.github.dblock.scheduling.OncePerSlot} on a {@code @Scheduled}
 * method, the slot computation ({@link io.github.dblock.scheduling.SlotSchedule}) and the
 * advisor that claims each slot in the database before the method runs.
 */
@NullMarked
package io.github.dblock.scheduling;

import org.jspecify.annotations.NullMarked;
