/**
 * Public API of db-lock: the {@link io.github.dblock.DbLock} annotation, {@link io.github.dblock.support.DbLockTemplate}, {@link io.github.dblock.LockHandle} and the exceptions.
 */
@NullMarked
package io.github.dblock;

import org.jspecify.annotations.NullMarked;
