/**
 * Public API of db-lock: the {@link io.github.dblock.DbLock} annotation, {@link io.github.dblock.LockHandle},
 * {@link io.github.dblock.DbLockContext}, {@link io.github.dblock.LockRequest} and its rules, the modes, the
 * policies and the exceptions. It depends on no other db-lock package; programmatic use is in
 * {@code io.github.dblock.support}.
 */
@NullMarked
package io.github.dblock;

import org.jspecify.annotations.NullMarked;
