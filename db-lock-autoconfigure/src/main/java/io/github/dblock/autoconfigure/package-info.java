/**
 * Spring Boot auto-configuration, configuration properties and schema migration for db-lock.
 */
@NullMarked
package io.github.dblock.autoconfigure;

import org.jspecify.annotations.NullMarked;
