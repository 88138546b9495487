package io.github.dblock.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * MySQL 8.0 and later. Keys compare byte for byte without padding
 * ({@code utf8mb4_0900_bin}).
 */
public class MySqlDialect extends MySqlFamilyDialect {

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public MySqlDialect(String table) {
		super("mysql", table);
	}

	/** InnoDB's lock errors, and {@code NOWAIT} finding a row locked (3572). */
	@Override
	protected boolean isContention(int errorCode, @Nullable String sqlState) {
		return super.isContention(errorCode, sqlState) || errorCode == 3572;
	}

}
