/**
 * The {@link io.github.dblock.jdbc.LockRepository} SPI, its JDBC implementation and one {@link io.github.dblock.jdbc.SqlDialect} per database.
 */
@NullMarked
package io.github.dblock.jdbc;

import org.jspecify.annotations.NullMarked;
