package io.github.dblock.shedlock.nodes;

import java.util.Arrays;
import java.util.Locale;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The MariaDB database the node tests run on, as db-lock-autoconfigure's suites reach it:
 * {@code DB_LOCK_TEST_MARIADB_URL} (with {@code _USER} and {@code _PASSWORD}); without it the
 * tests are skipped, or fail if {@code DB_LOCK_TEST_REQUIRED} names {@code mariadb}.
 *
 * @param url the JDBC URL
 * @param user the user
 * @param password the password
 */
record MariaDbTestDatabase(String url, String user, String password) {

	private static final String PREFIX = "DB_LOCK_TEST_MARIADB_";

	/** The database of the environment, else skips (or fails) the calling test. */
	static MariaDbTestDatabase fromEnvironment() {
		String url = System.getenv(PREFIX + "URL");
		if (url == null || url.isBlank()) {
			String message = "MariaDB tests skipped: set " + PREFIX + "URL (and " + PREFIX + "USER, " + PREFIX
					+ "PASSWORD) to a test database";
			if (required()) {
				Assertions.fail(message + " (required by DB_LOCK_TEST_REQUIRED)");
			}
			Assumptions.abort(message);
		}
		return new MariaDbTestDatabase(url, env(PREFIX + "USER", "root"), env(PREFIX + "PASSWORD", ""));
	}

	private static boolean required() {
		String required = System.getenv("DB_LOCK_TEST_REQUIRED");
		return required != null && Arrays.stream(required.split(","))
			.anyMatch((name) -> name.trim().toLowerCase(Locale.ROOT).equals("mariadb"));
	}

	private static String env(String name, String defaultValue) {
		String value = System.getenv(name);
		return (value != null) ? value : defaultValue;
	}

}
