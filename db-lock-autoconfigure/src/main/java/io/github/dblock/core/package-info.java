/**
 * The lock engine: in-JVM reentrancy, local waiter queues, waiting with back-off.
 */
@NullMarked
package io.github.dblock.core;

import org.jspecify.annotations.NullMarked;
