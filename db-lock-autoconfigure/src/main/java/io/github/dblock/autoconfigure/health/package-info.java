/**
 * Auto-configuration of db-lock's health indicator.
 */
@NullMarked
package io.github.dblock.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
