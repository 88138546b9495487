/**
 * The storage SPI ({@link io.github.dblock.jdbc.LockRepository} and the repositories of the
 * other modes) and its JDBC implementation over one owner of the lock connections,
 * {@link io.github.dblock.jdbc.LockConnections}.
 */
@NullMarked
package io.github.dblock.jdbc;

import org.jspecify.annotations.NullMarked;
