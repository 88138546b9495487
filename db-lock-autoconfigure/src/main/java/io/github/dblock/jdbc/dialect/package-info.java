/**
 * The SQL of each supported database: one {@link io.github.dblock.jdbc.dialect.SqlDialect}
 * per database, listed in {@link io.github.dblock.jdbc.dialect.Database}, with the
 * statements of each mode, the inspection of the server and the mapping of its errors.
 */
@NullMarked
package io.github.dblock.jdbc.dialect;

import org.jspecify.annotations.NullMarked;
