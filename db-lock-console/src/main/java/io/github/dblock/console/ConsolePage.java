package io.github.dblock.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.util.StreamUtils;
import org.springframework.web.util.HtmlUtils;

/**
 * The console's one HTML page, read once from the jar, with the two things only the
 * request knows filled in: the path it was served at (the base of its script, style and
 * JSON) and the CSRF token, as Spring Security's {@code _csrf} and {@code _csrf_header}
 * meta tags.
 */
final class ConsolePage {

	static final String LOCATION = "META-INF/db-lock-console/";

	private final String template;

	/**
	 * Reads the page from the jar.
	 * @throws UncheckedIOException if it is missing
	 */
	ConsolePage() {
		try (InputStream in = new ClassPathResource(LOCATION + "index.html").getInputStream()) {
			this.template = StreamUtils.copyToString(in, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("The db-lock console's page is missing from its jar", ex);
		}
	}

	/**
	 * The page.
	 * @param base the path the page is served at, with the context path, without a
	 * trailing slash
	 * @param csrf the request's CSRF token, or {@code null}
	 * @return the HTML
	 */
	String render(String base, ConsoleGuard.@Nullable Csrf csrf) {
		String meta = "";
		if (csrf != null) {
			meta = "<meta name=\"_csrf\" content=\"" + HtmlUtils.htmlEscape(csrf.token()) + "\">\n"
					+ "<meta name=\"_csrf_header\" content=\"" + HtmlUtils.htmlEscape(csrf.headerName()) + "\">\n"
					+ "<meta name=\"_csrf_parameter\" content=\"" + HtmlUtils.htmlEscape(csrf.parameterName()) + "\">";
		}
		return this.template.replace("<!-- db-lock:csrf -->", meta).replace("{{base}}", HtmlUtils.htmlEscape(base));
	}

}
