package io.github.dblock.console;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.util.UriUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the console's browser tests share: one headless Chromium per test class, signed in
 * once as {@code operator}, and an HTTP client for the calls a browser does not make.
 */
abstract class ConsoleBrowserTestSupport {

	/** The console's refresh in these tests ({@code db-lock.console.refresh}). */
	static final Duration REFRESH = Duration.ofSeconds(1);

	/** One refresh, and the time its request and rendering may take on a busy machine. */
	static final Duration ONE_REFRESH = REFRESH.plusSeconds(2);

	private static Chromium browser;

	private static boolean signedIn;

	@LocalServerPort
	int port;

	@BeforeAll
	static void startBrowser() {
		browser = Chromium.start();
		signedIn = false;
	}

	@AfterAll
	static void stopBrowser() {
		if (browser != null) {
			browser.close();
			browser = null;
		}
	}

	static Chromium browser() {
		return browser;
	}

	String url(String path) {
		return "http://localhost:" + this.port + path;
	}

	/**
	 * Opens the console, signing in as {@code operator} first if this browser has not, and
	 * waits for its first read. What the browser's console logged before is read away.
	 */
	void openConsole() {
		var driver = browser.driver();
		if (!signedIn) {
			driver.get(url("/db-lock"));
			// the console's own check sends an anonymous user to the application's login page
			new WebDriverWait(driver, Duration.ofSeconds(10)).until(ExpectedConditions.urlContains("/login"));
			driver.findElement(By.id("username")).sendKeys("operator");
			driver.findElement(By.id("password")).sendKeys(ConsoleTestApplication.PASSWORD);
			driver.findElement(By.cssSelector("button[type=submit]")).click();
			new WebDriverWait(driver, Duration.ofSeconds(10))
				.until(ExpectedConditions.presenceOfElementLocated(By.id("locks")));
			signedIn = true;
		}
		// what the login page logged (its favicon.ico is not found), and earlier pages
		browser.consoleErrors();
		driver.get(url("/db-lock"));
		new WebDriverWait(driver, ONE_REFRESH)
			.until(ExpectedConditions.attributeToBe(By.id("status"), "data-state", "live"));
	}

	/**
	 * Waits for the row of a key in the table of locks held now.
	 * @param key the stored key
	 * @param within how long to wait
	 * @return its cells, as {@link #cells} reads them
	 */
	Map<String, String> lockRow(String key, Duration within) {
		return new WebDriverWait(browser.driver(), within).until((driver) -> cells("locks", key));
	}

	static By rowOf(String table, String key) {
		return By.cssSelector("#" + table + " tbody tr[data-key='" + key.replace("'", "\\'") + "']");
	}

	/**
	 * The cells of a key's row, read at once (the page renders its tables anew at every
	 * read), by the first class of each cell; the countdown's milliseconds as
	 * {@code remaining-ms}.
	 * @param table the table's id
	 * @param key the stored key
	 * @return the cells' texts, or {@code null} while the row is not shown
	 */
	@SuppressWarnings("unchecked")
	static Map<String, String> cells(String table, String key) {
		return (Map<String, String>) browser().driver()
			.executeScript("""
					var row = document.querySelector(arguments[0]);
					if (!row) { return null; }
					var cells = {};
					row.querySelectorAll('td').forEach(function (td) {
					  cells[td.className.split(' ')[0]] = td.textContent;
					  if (td.dataset.remainingMs) { cells['remaining-ms'] = td.dataset.remainingMs; }
					});
					return cells;
					""", "#" + table + " tbody tr[data-key='" + key.replace("'", "\\'") + "']");
	}

	/**
	 * Clicks the release button of a key's row, found again if a read renders it anew.
	 * @param key the stored key
	 */
	static void clickRelease(String key) {
		new WebDriverWait(browser().driver(), ONE_REFRESH).ignoring(StaleElementReferenceException.class)
			.until((driver) -> {
				driver.findElement(By.cssSelector("#locks tbody tr[data-key='" + key + "'] button.release-button"))
					.click();
				return true;
			});
	}

	/**
	 * An HTTP call with Java's client, optionally signed in with HTTP Basic.
	 * @param request the request, without its authorization
	 * @param user the user, or {@code null} for an anonymous call
	 * @param cookies the cookies to keep between calls
	 * @return the response
	 */
	HttpResponse<String> send(HttpRequest.Builder request, String user, CookieManager cookies)
			throws IOException, InterruptedException {
		if (user != null) {
			request.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString((user + ":" + ConsoleTestApplication.PASSWORD).getBytes(StandardCharsets.UTF_8)));
		}
		HttpClient client = HttpClient.newBuilder()
			.cookieHandler(cookies)
			.followRedirects(HttpClient.Redirect.NEVER)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		return client.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
	}

	HttpRequest.Builder get(String path) {
		return HttpRequest.newBuilder(URI.create(url(path))).header("X-Requested-With", "XMLHttpRequest");
	}

	HttpRequest.Builder postForm(String path, Map<String, String> form) {
		String body = form.entrySet()
			.stream()
			.map((entry) -> entry.getKey() + "=" + UriUtils.encode(entry.getValue(), StandardCharsets.UTF_8))
			.collect(Collectors.joining("&"));
		return HttpRequest.newBuilder(URI.create(url(path)))
			.header("X-Requested-With", "XMLHttpRequest")
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(body));
	}

	/**
	 * The page's meta tag of a name.
	 * @param html the page
	 * @param name the name
	 * @return its content
	 */
	static String meta(String html, String name) {
		Matcher matcher = Pattern.compile("<meta name=\"" + Pattern.quote(name) + "\" content=\"([^\"]*)\">")
			.matcher(html);
		assertThat(matcher.find()).as("meta " + name).isTrue();
		return matcher.group(1);
	}

}
