package io.github.dblock.jdbc.dialect;

import java.util.regex.Pattern;

/**
 * Validation of the names that reach SQL text rather than bind parameters.
 *
 * @since 0.1.0
 */
public final class SqlIdentifiers {

	/** Leaves room for the suffixes of the sequence and index names derived from the table. */
	private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,47}");

	private SqlIdentifiers() {
	}

	/**
	 * Checks a lock table name.
	 * @param tableName the name
	 * @return the name
	 * @throws IllegalArgumentException unless it is a plain identifier of at most 48 characters
	 */
	public static String requireTableName(String tableName) {
		if (!TABLE_NAME.matcher(tableName).matches()) {
			throw new IllegalArgumentException("Invalid db-lock table name '" + tableName
					+ "': expected a letter or underscore followed by letters, digits or underscores, at most 48 characters");
		}
		return tableName;
	}

}
