/**
 * The locks compared by the benchmark, each behind {@link io.github.dblock.benchmarks.contender.LockContender}.
 */
@NullMarked
package io.github.dblock.benchmarks.contender;

import org.jspecify.annotations.NullMarked;
