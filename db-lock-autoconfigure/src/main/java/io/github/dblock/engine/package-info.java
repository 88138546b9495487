/**
 * The lock engine: the shell every mode runs under (checks, reentrancy, local waiter queues, waiting with back-off, renewal, release, observation) and the modes.
 */
@NullMarked
package io.github.dblock.engine;

import org.jspecify.annotations.NullMarked;
