/**
 * The benchmark harness: scenarios, the cycle loop they share, the hot-key worker
 * processes and the reports.
 */
@NullMarked
package io.github.dblock.benchmarks;

import org.jspecify.annotations.NullMarked;
