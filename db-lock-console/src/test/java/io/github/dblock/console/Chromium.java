package io.github.dblock.console;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.logging.Level;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

import org.springframework.util.FileSystemUtils;

/**
 * Headless Chromium for the console's tests: Debian's {@code /usr/bin/chromium} and
 * {@code /usr/bin/chromedriver}, never a downloaded browser or driver (the driver's and the
 * browser's paths are given, so Selenium Manager is not asked), a fresh profile per
 * browser. Where they are missing the tests are skipped, or fail if
 * {@code DB_LOCK_TEST_REQUIRED} names {@code chromium}.
 */
final class Chromium implements AutoCloseable {

	static final Path BINARY = Path.of("/usr/bin/chromium");

	static final Path DRIVER = Path.of("/usr/bin/chromedriver");

	private final ChromeDriver driver;

	private final Path profile;

	private Chromium(ChromeDriver driver, Path profile) {
		this.driver = driver;
		this.profile = profile;
	}

	/**
	 * Starts a browser, or skips the calling tests where there is none.
	 * @return the browser
	 */
	static Chromium start() {
		if (!Files.isExecutable(BINARY) || !Files.isExecutable(DRIVER)) {
			String message = "db-lock-console browser tests skipped: " + BINARY + " or " + DRIVER
					+ " is missing (apt-get install -y chromium chromium-driver)";
			if (required()) {
				Assertions.fail(message + " (required by DB_LOCK_TEST_REQUIRED)");
			}
			System.out.println(message);
			Assumptions.abort(message);
		}
		System.setProperty("webdriver.chrome.driver", DRIVER.toString());
		Path profile;
		try {
			profile = Files.createTempDirectory("db-lock-console-chromium");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		ChromeOptions options = new ChromeOptions();
		options.setBinary(BINARY.toFile());
		options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
				"--user-data-dir=" + profile, "--window-size=1360,900", "--lang=en-US");
		LoggingPreferences logging = new LoggingPreferences();
		logging.enable(LogType.BROWSER, Level.ALL);
		options.setCapability("goog:loggingPrefs", logging);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
			.usingAnyFreePort()
			.build();
		return new Chromium(new ChromeDriver(service, options), profile);
	}

	ChromeDriver driver() {
		return this.driver;
	}

	/**
	 * The errors the browser's console logged since the last call (the log is read, and
	 * so emptied).
	 * @return the errors
	 */
	List<String> consoleErrors() {
		return this.driver.manage()
			.logs()
			.get(LogType.BROWSER)
			.getAll()
			.stream()
			.filter((entry) -> entry.getLevel().intValue() >= Level.SEVERE.intValue())
			.map(LogEntry::toString)
			.toList();
	}

	@Override
	public void close() {
		try {
			this.driver.quit();
		}
		finally {
			FileSystemUtils.deleteRecursively(this.profile.toFile());
		}
	}

	private static boolean required() {
		String required = System.getenv("DB_LOCK_TEST_REQUIRED");
		return required != null && Arrays.stream(required.split(","))
			.map((name) -> name.trim().toLowerCase(Locale.ROOT))
			.anyMatch("chromium"::equals);
	}

}
