/**
 * Operability of db-lock: Micrometer meters, the {@code dbLock} health indicator and the
 * {@code dblock} actuator endpoint, each auto-configured where its library is present.
 */
@NullMarked
package io.github.dblock.actuate;

import org.jspecify.annotations.NullMarked;
