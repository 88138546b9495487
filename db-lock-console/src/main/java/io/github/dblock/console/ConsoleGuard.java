package io.github.dblock.console;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Who may use the console, and the CSRF token its state-changing call must carry: open
 * without Spring Security, {@link SpringSecurityConsoleGuard} with it.
 */
interface ConsoleGuard {

	/** No check and no token, for an application without Spring Security. */
	ConsoleGuard OPEN = new ConsoleGuard() {

		@Override
		public void check(HttpServletRequest request) {
		}

		@Override
		public @Nullable Csrf csrf(HttpServletRequest request) {
			return null;
		}

	};

	/**
	 * Checks that the request's user may use the console.
	 * @param request the request
	 * @throws RuntimeException the security framework's exception if not, which its own
	 * filters turn into a challenge (401, a login page) or a 403
	 */
	void check(HttpServletRequest request);

	/**
	 * The CSRF token of the request, for the page to send back with a release.
	 * @param request the request
	 * @return the token, or {@code null} if the request has none
	 */
	@Nullable Csrf csrf(HttpServletRequest request);

	/**
	 * A CSRF token and where it is sent.
	 * @param headerName the request header that carries it
	 * @param parameterName the request parameter that may carry it instead
	 * @param token its value
	 */
	record Csrf(String headerName, String parameterName, String token) {
	}

}
