/**
 * Auto-configuration of the leader election ({@code db-lock.leader.*}).
 */
@NullMarked
package io.github.dblock.autoconfigure.leader;

import org.jspecify.annotations.NullMarked;
