package io.github.dblock.console;

import java.net.CookieManager;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockLostException;
import io.github.dblock.actuate.DbLockEndpoint;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.support.DbLockTemplate;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The console in headless Chromium, on an application that allows force release and
 * restricts the console to the role {@code OPERATOR}, while its own filter chain lets
 * every request through, with the lock log on.
 */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:console-allowed;DB_CLOSE_DELAY=-1",
				"management.endpoints.web.exposure.include=dblock,health",
				// renewed every second: a holder finds a release soon
				"db-lock.default-lease=6s", "db-lock.watchdog.interval=1s", "db-lock.console.refresh=1s", "db-lock.console.allow-release=true",
				"db-lock.console.roles=OPERATOR", "db-lock.history.enabled=true" })
class DbLockConsoleBrowserTests extends ConsoleBrowserTestSupport {

	@Autowired
	DbLockTemplate template;

	@Autowired
	DbLockEndpoint endpoint;

	@Autowired
	LockRepository repository;

	@Test
	void pageLoadsWithoutErrorsAndShowsALockTakenWithinOneRefresh() throws Exception {
		openConsole();
		try (Holder holder = new Holder("order-worker-1",
				() -> this.template.acquire("order:1001", Duration.ZERO, null))) {
			String key = holder.handle().key();
			Map<String, String> row = lockRow(key, ONE_REFRESH);
			DbLockEndpoint.Row stored = storedRow(key);
			assertThat(row).containsEntry("owner", stored.owner())
				.containsEntry("token", Long.toString(stored.token()))
				.containsEntry("host", InetAddress.getLocalHost().getHostName())
				.containsEntry("process", Long.toString(ProcessHandle.current().pid()))
				.containsEntry("mode", "lease");
			assertThat(row.get("time-left")).matches("\\d+\\.\\d s");
			assertThat(row.get("acquired")).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3}");
			Map<String, String> held = cells("held", key);
			assertThat(held).containsEntry("mode", "lease").containsEntry("thread", "order-worker-1");
			assertThat(browser().driver().findElements(By.cssSelector("#locks button.release-button"))).isNotEmpty();
			assertThat(browser().driver().findElement(By.id("clock")).getText())
				.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3}");
		}
		assertThat(browser().consoleErrors()).isEmpty();
	}

	@Test
	void countdownMovesBetweenRefreshes() {
		openConsole();
		// a fixed lease, never renewed: its end does not move, so only the countdown does
		try (LockHandle handle = this.template.acquire("countdown:1", Duration.ZERO, Duration.ofMinutes(1))) {
			Map<String, String> row = lockRow(handle.key(), ONE_REFRESH);
			long first = Long.parseLong(row.get("remaining-ms"));
			assertThat(first).isBetween(1L, Duration.ofMinutes(1).toMillis());
			// the page ticks five times a second and reads once a second: well within one refresh
			new WebDriverWait(browser().driver(), REFRESH)
				.until((driver) -> Long.parseLong(cells("locks", handle.key()).get("remaining-ms")) <= first - 200);
			String text = cells("locks", handle.key()).get("time-left");
			new WebDriverWait(browser().driver(), REFRESH)
				.until((driver) -> !cells("locks", handle.key()).get("time-left").equals(text));
		}
		assertThat(browser().consoleErrors()).isEmpty();
	}

	@Test
	void filtersByNameAndMode() {
		openConsole();
		try (LockHandle order = this.template.acquire("filter-order:1", Duration.ZERO, null);
				LockHandle read = this.template.acquire(DbLockMode.READ, "filter-catalog:1", Duration.ZERO)) {
			lockRow(order.key(), ONE_REFRESH);
			var driver = browser().driver();
			new WebDriverWait(driver, ONE_REFRESH)
				.until(ExpectedConditions.visibilityOfElementLocated(rowOf("held", read.key())));
			driver.findElement(By.id("filter-name")).sendKeys("filter-catalog");
			assertThat(driver.findElements(rowOf("locks", order.key()))).isEmpty();
			assertThat(driver.findElements(rowOf("held", order.key()))).isEmpty();
			assertThat(driver.findElements(rowOf("held", read.key()))).hasSize(1);
			driver.findElement(By.id("filter-name")).clear();
			new Select(driver.findElement(By.id("filter-mode"))).selectByValue("read");
			assertThat(driver.findElements(rowOf("locks", order.key()))).isEmpty();
			assertThat(driver.findElements(rowOf("held", read.key()))).hasSize(1);
			new Select(driver.findElement(By.id("filter-mode"))).selectByValue("");
			assertThat(driver.findElements(rowOf("locks", order.key()))).hasSize(1);
		}
		assertThat(browser().consoleErrors()).isEmpty();
	}

	@Test
	void showsAThreadOfThisNodeThatWaitsForAKeyWhileItWaits() throws Exception {
		openConsole();
		try (Holder holder = new Holder("export-worker-1",
				() -> this.template.acquire("export:9", Duration.ZERO, null))) {
			String key = holder.handle().key();
			// a second thread of this node waits behind the holder, in this JVM
			try (Holder waiter = new Holder("export-worker-2",
					() -> this.template.acquire("export:9", Duration.ofMinutes(1), null))) {
				var driver = browser().driver();
				Map<String, String> row = new WebDriverWait(driver, ONE_REFRESH)
					.until((ignored) -> cells("waiting", key));
				assertThat(row).containsEntry("mode", "lease").containsEntry("threads", "1");
				assertThat(driver.findElement(By.id("waiting-section")).isDisplayed()).isTrue();
				holder.close();
				assertThat(waiter.handle().key()).isEqualTo(key);
				new WebDriverWait(driver, ONE_REFRESH)
					.until(ExpectedConditions.invisibilityOfElementLocated(rowOf("waiting", key)));
				new WebDriverWait(driver, ONE_REFRESH).until((ignored) -> {
					Map<String, String> held = cells("held", key);
					return held != null && "export-worker-2".equals(held.get("thread"));
				});
			}
		}
		assertThat(browser().consoleErrors()).isEmpty();
	}

	@Test
	void aReleasedHoldAppearsInTheLockLogsTimeline() {
		openConsole();
		String key;
		long token;
		try (LockHandle handle = this.template.acquire("timeline:1", Duration.ZERO, null)) {
			key = handle.key();
			token = handle.fencingToken();
			// while held, its bar runs to now
			assertThat(logBar(key, "held")).isEqualTo(Long.toString(token));
		}
		assertThat(logBar(key, "released")).isEqualTo(Long.toString(token));
		assertThat(browser().driver().findElement(By.id("log-section")).isDisplayed()).isTrue();
		assertThat(browser().consoleErrors()).isEmpty();
	}

	/** Waits for a hold of a key with an outcome in the lock log's timeline; returns its token. */
	private static String logBar(String key, String outcome) {
		String bar = "#log-timeline .track-row[data-key='" + key + "'] .hold[data-outcome='" + outcome + "']";
		return new WebDriverWait(browser().driver(), ONE_REFRESH).until((driver) -> (String) browser().driver()
			.executeScript("var bar = document.querySelector(arguments[0]); return bar ? bar.dataset.token : null;", bar));
	}

	@Test
	void forceReleaseFromThePageRemovesTheLockAndItsHolderFindsItLost() throws Exception {
		openConsole();
		Holder holder = new Holder("payment-worker-7", () -> this.template.acquire("payment:77", Duration.ZERO, null));
		LockHandle handle = holder.handle();
		DbLockEndpoint.Row stored = storedRow(handle.key());
		lockRow(handle.key(), ONE_REFRESH);
		clickRelease(handle.key());
		var driver = browser().driver();
		WebElement dialog = new WebDriverWait(driver, Duration.ofSeconds(5))
			.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm-release")));
		assertThat(dialog.findElement(By.id("confirm-key")).getText()).isEqualTo(handle.key());
		assertThat(dialog.findElement(By.id("confirm-owner")).getText()).isEqualTo(stored.owner());
		assertThat(dialog.findElement(By.id("confirm-token")).getText()).isEqualTo(Long.toString(stored.token()));
		dialog.findElement(By.id("confirm-ok")).click();
		new WebDriverWait(driver, ONE_REFRESH)
			.until(ExpectedConditions.invisibilityOfElementLocated(rowOf("locks", handle.key())));
		assertThat(driver.findElement(By.id("notice")).getText()).startsWith("Released " + handle.key());
		assertThat(storedRow(handle.key())).isNull();
		// the watchdog's next renewal finds the row gone
		await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
		assertThat(handle.lostSince()).isPresent();
		assertThat(holder.end((held) -> this.template.release(held, null))).isInstanceOf(LockLostException.class);
		assertThat(browser().consoleErrors()).isEmpty();
	}

	@Test
	void cancelledReleaseKeepsTheLock() {
		openConsole();
		try (LockHandle handle = this.template.acquire("payment:78", Duration.ZERO, null)) {
			lockRow(handle.key(), ONE_REFRESH);
			clickRelease(handle.key());
			var driver = browser().driver();
			new WebDriverWait(driver, Duration.ofSeconds(5))
				.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm-cancel")))
				.click();
			new WebDriverWait(driver, Duration.ofSeconds(5))
				.until(ExpectedConditions.invisibilityOfElementLocated(By.id("confirm-release")));
			assertThat(handle.isHeld()).isTrue();
			assertThat(storedRow(handle.key())).isNotNull();
		}
	}

	@Test
	void theConsoleNeedsASignedInUserWithTheRoleWhateverTheApplicationsChainAllows() throws Exception {
		try (LockHandle handle = this.template.acquire("access:1", Duration.ZERO, null)) {
			HttpResponse<String> anonymous = send(get("/db-lock/api/locks"), null, new CookieManager());
			assertThat(anonymous.statusCode()).isEqualTo(401);
			// a browser is sent to the application's login page
			HttpResponse<String> anonymousPage = send(
					HttpRequest.newBuilder(URI.create(url("/db-lock"))).header("Accept", "text/html"), null,
					new CookieManager());
			assertThat(anonymousPage.statusCode()).isEqualTo(302);
			assertThat(anonymousPage.headers().firstValue("Location")).hasValueSatisfying(
					(location) -> assertThat(location).endsWith("/login"));
			assertThat(send(get("/db-lock/assets/console.js"), null, new CookieManager()).statusCode())
				.isEqualTo(401);
			HttpResponse<String> guest = send(get("/db-lock/api/locks"), "guest", new CookieManager());
			assertThat(guest.statusCode()).isEqualTo(403);
			HttpResponse<String> operator = send(get("/db-lock/api/locks"), "operator", new CookieManager());
			assertThat(operator.statusCode()).isEqualTo(200);
			assertThat(operator.headers().firstValue("Content-Type")).hasValueSatisfying(
					(type) -> assertThat(type).startsWith("application/json"));
			assertThat(operator.body()).contains("\"key\":\"" + handle.key() + "\"", "\"releaseAllowed\":true",
					"\"source\":\"database\"", "\"heldHere\"");
			HttpResponse<String> script = send(get("/db-lock/assets/console.js"), "operator", new CookieManager());
			assertThat(script.statusCode()).isEqualTo(200);
			assertThat(script.headers().firstValue("Content-Type")).hasValueSatisfying(
					(type) -> assertThat(type).contains("javascript"));
		}
	}

	@Test
	void aReleaseWithoutTheCsrfTokenIsRefusedAndOneWithItIsDone() throws Exception {
		try (LockHandle handle = this.template.acquire("csrf:1", Duration.ZERO, Duration.ofMinutes(1))) {
			DbLockEndpoint.Row stored = storedRow(handle.key());
			Map<String, String> form = Map.of("key", stored.key(), "owner", stored.owner(), "token",
					Long.toString(stored.token()));
			CookieManager cookies = new CookieManager();
			HttpResponse<String> withoutToken = send(postForm("/db-lock/api/release", form), "operator", cookies);
			assertThat(withoutToken.statusCode()).isEqualTo(403);
			assertThat(storedRow(handle.key())).isNotNull();
			HttpResponse<String> page = send(get("/db-lock").header("Accept", "text/html"), "operator", cookies);
			assertThat(page.statusCode()).isEqualTo(200);
			String header = meta(page.body(), "_csrf_header");
			String token = meta(page.body(), "_csrf");
			HttpResponse<String> guest = send(postForm("/db-lock/api/release", form).header(header, token), "guest",
					cookies);
			assertThat(guest.statusCode()).isEqualTo(403);
			assertThat(storedRow(handle.key())).isNotNull();
			HttpResponse<String> released = send(postForm("/db-lock/api/release", form).header(header, token),
					"operator", cookies);
			assertThat(released.statusCode()).isEqualTo(200);
			assertThat(released.body()).contains("\"released\":true");
			assertThat(this.endpoint.locks().rows()).extracting(DbLockEndpoint.Row::key).doesNotContain(handle.key());
			HttpResponse<String> again = send(postForm("/db-lock/api/release", form).header(header, token),
					"operator", cookies);
			assertThat(again.body()).contains("\"released\":false");
		}
		catch (LockLostException | io.github.dblock.LockReleaseException ex) {
			// closing a handle whose row was force-released: expected, the holder lost it
		}
	}

	/**
	 * The screenshot of the README: the page while locks of this node and of two others are
	 * held, written to {@code target/console.png}, and to the path in the system property
	 * {@code db-lock.console.screenshot} where it is set.
	 */
	@Test
	void screenshotUnderLoad() throws Exception {
		List<Holder> holders = new ArrayList<>();
		List<Lease> others = new ArrayList<>();
		try {
			// earlier holds, for the lock log's timeline
			for (int i = 0; i < 3; i++) {
				this.template.acquire("report:daily", Duration.ZERO, null).close();
			}
			holders.add(new Holder("http-nio-8080-exec-4",
					() -> this.template.acquire("order:1042", Duration.ZERO, Duration.ofSeconds(45))));
			holders.add(new Holder("http-nio-8080-exec-9",
					() -> this.template.acquire("payment:8816", Duration.ZERO, Duration.ofMinutes(2))));
			holders.add(new Holder("invoice-batch-1",
					() -> this.template.acquire("invoice:2026-11", Duration.ZERO, Duration.ofMinutes(12))));
			holders.add(new Holder("scheduling-1", () -> this.template.acquire("report:daily", Duration.ZERO, null)));
			holders.add(new Holder("http-nio-8080-exec-2",
					() -> this.template.acquire(DbLockMode.READ, "catalog:prices", Duration.ZERO)));
			for (Holder holder : holders) {
				holder.handle();
			}
			others.add(this.repository
				.tryAcquire("order:1043", "app-2.prod.internal/41877/5f3a9c1e#2k", Duration.ofSeconds(25))
				.orElseThrow());
			others.add(this.repository
				.tryAcquire("shipment:DE-5521", "app-3.prod.internal/1290/c07d11aa#9", Duration.ofMinutes(4))
				.orElseThrow());
			others.add(this.repository
				.tryAcquire("stock:sku-7731", "app-2.prod.internal/41877/5f3a9c1e#2m", Duration.ofSeconds(90))
				.orElseThrow());
			openConsole();
			for (Lease other : others) {
				lockRow(other.key(), ONE_REFRESH);
			}
			new WebDriverWait(browser().driver(), ONE_REFRESH)
				.until(ExpectedConditions.visibilityOfElementLocated(rowOf("held", "catalog:prices")));
			byte[] png = browser().driver().getScreenshotAs(OutputType.BYTES);
			assertThat(png).hasSizeGreaterThan(10_000);
			Files.write(Files.createDirectories(Path.of("target")).resolve("console.png"), png);
			String copy = System.getProperty("db-lock.console.screenshot");
			if (copy != null && !copy.isBlank()) {
				Files.write(Path.of(copy), png);
			}
			// the lock log's timeline, below the fold
			new WebDriverWait(browser().driver(), ONE_REFRESH).until(ExpectedConditions.presenceOfElementLocated(
					By.cssSelector("#log-timeline .track-row[data-key='report:daily'] .hold[data-outcome='released']")));
			browser().driver().executeScript("document.getElementById('log-section').scrollIntoView()");
			Files.write(Path.of("target", "console-log.png"), browser().driver().getScreenshotAs(OutputType.BYTES));
			assertThat(browser().consoleErrors()).isEmpty();
		}
		finally {
			for (Holder holder : holders) {
				holder.close();
			}
			others.forEach((lease) -> this.repository.release(lease, Duration.ZERO));
		}
	}

	private DbLockEndpoint.Row storedRow(String key) {
		return this.endpoint.locks()
			.rows()
			.stream()
			.filter((row) -> row.key().equals(key))
			.findFirst()
			.orElse(null);
	}

}
