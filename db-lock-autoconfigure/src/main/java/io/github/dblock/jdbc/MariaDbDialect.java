package io.github.dblock.jdbc;

/**
 * MariaDB 10.6 and later. Keys compare byte for byte without padding
 * ({@code utf8mb4_nopad_bin}).
 */
public class MariaDbDialect extends MySqlFamilyDialect {

	/**
	 * Creates the dialect.
	 * @param table the lock table
	 */
	public MariaDbDialect(String table) {
		super("mariadb", table);
	}

	/** A sequence of its own: the lease tokens come from {@code AUTO_INCREMENT}. */
	@Override
	public String tokenSequenceSql() {
		return "SELECT NEXTVAL(" + table() + "_keys_token_seq)";
	}

}
