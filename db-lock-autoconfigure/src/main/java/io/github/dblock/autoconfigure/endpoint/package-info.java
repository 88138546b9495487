/**
 * Auto-configuration of the {@code dblock} actuator endpoint.
 */
@NullMarked
package io.github.dblock.autoconfigure.endpoint;

import org.jspecify.annotations.NullMarked;
