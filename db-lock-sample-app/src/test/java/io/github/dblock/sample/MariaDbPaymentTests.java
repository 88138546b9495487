package io.github.dblock.sample;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The payment tests on MariaDB with the {@code mysql} profile, run only when
 * {@code DB_LOCK_TEST_MARIADB_URL} names a database ({@code DB_LOCK_TEST_MARIADB_USER},
 * default {@code root}, and {@code DB_LOCK_TEST_MARIADB_PASSWORD}, default empty).
 */
@ActiveProfiles("mysql")
@EnabledIfEnvironmentVariable(named = "DB_LOCK_TEST_MARIADB_URL", matches = ".*\\S.*",
		disabledReason = "DB_LOCK_TEST_MARIADB_URL is not set: skipping the sample app's MariaDB tests "
				+ "(set it to e.g. jdbc:mariadb://127.0.0.1:3306/test to run them)")
class MariaDbPaymentTests extends AbstractPaymentTests {

	private static final @Nullable String URL = System.getenv("DB_LOCK_TEST_MARIADB_URL");

	@DynamicPropertySource
	static void mariaDb(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", () -> URL);
		registry.add("spring.datasource.username", () -> env("DB_LOCK_TEST_MARIADB_USER", "root"));
		registry.add("spring.datasource.password", () -> env("DB_LOCK_TEST_MARIADB_PASSWORD", ""));
	}

	private static String env(String name, String defaultValue) {
		String value = System.getenv(name);
		return (value != null) ? value : defaultValue;
	}

}
