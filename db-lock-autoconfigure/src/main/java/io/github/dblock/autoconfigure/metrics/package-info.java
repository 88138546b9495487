/**
 * Auto-configuration of db-lock's meters.
 */
@NullMarked
package io.github.dblock.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
