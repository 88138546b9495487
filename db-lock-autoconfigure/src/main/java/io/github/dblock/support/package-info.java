/**
 * Programmatic use of db-lock: {@link io.github.dblock.support.DbLockTemplate} and the {@code java.util.concurrent.locks.Lock} adapter.
 */
@NullMarked
package io.github.dblock.support;

import org.jspecify.annotations.NullMarked;
