package io.github.dblock.console;

import java.net.CookieManager;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import io.github.dblock.LockHandle;
import io.github.dblock.actuate.DbLockEndpoint;
import io.github.dblock.support.DbLockTemplate;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console in headless Chromium where force release is not allowed (the default): no
 * release button, and a release call, signed in and with the CSRF token, refused with a 403.
 */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:console-refused;DB_CLOSE_DELAY=-1",
				"management.endpoints.web.exposure.include=dblock", "db-lock.console.refresh=1s" })
class DbLockConsoleReleaseRefusedBrowserTests extends ConsoleBrowserTestSupport {

	@Autowired
	DbLockTemplate template;

	@Autowired
	DbLockEndpoint endpoint;

	@Test
	void pageShowsTheLockWithoutAReleaseButton() {
		openConsole();
		try (LockHandle handle = this.template.acquire("refused:1", Duration.ZERO, null)) {
			Map<String, String> row = lockRow(handle.key(), ONE_REFRESH);
			assertThat(row.get("actions")).isEmpty();
			assertThat(browser().driver().findElements(By.cssSelector("button.release-button"))).isEmpty();
		}
		assertThat(browser().consoleErrors()).isEmpty();
	}

	@Test
	void releaseIsRefusedWithA403AndTheLockStaysHeld() throws Exception {
		try (LockHandle handle = this.template.acquire("refused:2", Duration.ZERO, null)) {
			DbLockEndpoint.Row stored = this.endpoint.locks()
				.rows()
				.stream()
				.filter((row) -> row.key().equals(handle.key()))
				.findFirst()
				.orElseThrow();
			CookieManager cookies = new CookieManager();
			HttpResponse<String> page = send(get("/db-lock").header("Accept", "text/html"), "operator", cookies);
			assertThat(page.statusCode()).isEqualTo(200);
			HttpResponse<String> locks = send(get("/db-lock/api/locks"), "operator", cookies);
			assertThat(locks.body()).contains("\"releaseAllowed\":false");
			HttpResponse<String> release = send(postForm("/db-lock/api/release",
					Map.of("key", stored.key(), "owner", stored.owner(), "token", Long.toString(stored.token())))
				.header(meta(page.body(), "_csrf_header"), meta(page.body(), "_csrf")), "operator", cookies);
			assertThat(release.statusCode()).isEqualTo(403);
			assertThat(release.body()).contains("db-lock.console.allow-release=true");
			assertThat(handle.isHeld()).isTrue();
			assertThat(this.endpoint.locks().rows()).extracting(DbLockEndpoint.Row::key).contains(handle.key());
		}
	}

}
