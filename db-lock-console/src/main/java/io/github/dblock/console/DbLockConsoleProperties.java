package io.github.dblock.console;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The db-lock console: {@code db-lock.console.*}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("db-lock.console")
public class DbLockConsoleProperties {

	/**
	 * Whether to serve the console where Spring MVC, the actuator and the dblock endpoint
	 * are present.
	 */
	private boolean enabled = true;

	/**
	 * Path of the console's page, below the application's context path; its JSON and its
	 * script and style are served under it.
	 */
	private String path = "/db-lock";

	/**
	 * Whether the page may force-release a lock, through the dblock endpoint's delete
	 * operation (which must be allowed too: its access unrestricted).
	 */
	private boolean allowRelease = false;

	/**
	 * How often the page reads the locks again.
	 */
	private Duration refresh = Duration.ofSeconds(2);

	/**
	 * Roles of which a user needs one to use the console, where Spring Security is on the
	 * classpath. Any authenticated user when empty.
	 */
	private List<String> roles = new ArrayList<>();

	/**
	 * Whether the console is served.
	 * @return whether enabled
	 */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Sets whether the console is served.
	 * @param enabled whether enabled
	 */
	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	/**
	 * The page's path, starting with a slash and never ending with one.
	 * @return the path
	 */
	public String getPath() {
		return this.path;
	}

	/**
	 * Sets the page's path; a trailing slash is dropped.
	 * @param path the path, starting with a slash, without wildcards or template variables
	 * @throws IllegalArgumentException if the path is not such a path
	 */
	public void setPath(String path) {
		String trimmed = path.strip();
		while (trimmed.length() > 1 && trimmed.endsWith("/")) {
			trimmed = trimmed.substring(0, trimmed.length() - 1);
		}
		if (!trimmed.startsWith("/") || trimmed.length() < 2 || trimmed.chars()
			.anyMatch((c) -> c == '*' || c == '?' || c == '{' || c == '}' || c == '#' || Character.isWhitespace(c))) {
			throw new IllegalArgumentException("db-lock.console.path must be a path such as /db-lock (starting with "
					+ "a slash, not the root, without wildcards or template variables), got '" + path + "'");
		}
		this.path = trimmed;
	}

	/**
	 * Whether the page may force-release a lock.
	 * @return whether release is allowed
	 */
	public boolean isAllowRelease() {
		return this.allowRelease;
	}

	/**
	 * Sets whether the page may force-release a lock.
	 * @param allowRelease whether release is allowed
	 */
	public void setAllowRelease(boolean allowRelease) {
		this.allowRelease = allowRelease;
	}

	/**
	 * How often the page reads the locks again.
	 * @return the interval
	 */
	public Duration getRefresh() {
		return this.refresh;
	}

	/**
	 * Sets how often the page reads the locks again.
	 * @param refresh the interval, at least 100 milliseconds
	 * @throws IllegalArgumentException if it is shorter
	 */
	public void setRefresh(Duration refresh) {
		if (refresh.compareTo(Duration.ofMillis(100)) < 0) {
			throw new IllegalArgumentException(
					"db-lock.console.refresh must be at least 100ms, got " + refresh.toMillis() + "ms");
		}
		this.refresh = refresh;
	}

	/**
	 * The roles of which a user needs one, where Spring Security is on the classpath.
	 * @return the roles, without or with the {@code ROLE_} prefix; empty for any
	 * authenticated user
	 */
	public List<String> getRoles() {
		return this.roles;
	}

	/**
	 * Sets the roles of which a user needs one.
	 * @param roles the roles; empty for any authenticated user
	 */
	public void setRoles(List<String> roles) {
		this.roles = new ArrayList<>(roles);
	}

}
