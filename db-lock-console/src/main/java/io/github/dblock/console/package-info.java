/**
 * The db-lock console: an operator's page, served by the application itself, that shows
 * what the {@code dblock} actuator endpoint reads (the locks held now, live) and, where
 * allowed, force-releases a lock through the endpoint's delete operation.
 */
@NullMarked
package io.github.dblock.console;

import org.jspecify.annotations.NullMarked;
