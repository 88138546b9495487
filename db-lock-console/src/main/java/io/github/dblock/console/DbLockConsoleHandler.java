package io.github.dblock.console;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.github.dblock.actuate.DbLockEndpoint;
import io.github.dblock.jdbc.LockRepository;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.io.ClassPathResource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The console's routes: the page, its script and style, the locks as JSON (what the
 * {@code dblock} endpoint's read operation returns, with the database's time for the
 * countdowns) and the release, through the endpoint's delete operation.
 */
final class DbLockConsoleHandler {

	private static final Log logger = LogFactory.getLog(DbLockConsoleHandler.class);

	private static final MediaType HTML = new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8);

	/** The page loads nothing but its own script and style, and talks to nothing but its application. */
	private static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
			+ "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

	private final String path;

	private final DbLockEndpoint endpoint;

	private final @Nullable LockRepository repository;

	private final ConsoleGuard guard;

	private final ConsolePage page = new ConsolePage();

	private final boolean releaseAllowed;

	private final Duration refresh;

	/**
	 * Creates the handler.
	 * @param path the console's path, starting with a slash, without a trailing one
	 * @param endpoint the endpoint whose operations the console calls
	 * @param repository the lock repository, for the database's time, or {@code null}
	 * @param guard who may use the console
	 * @param releaseAllowed whether a release is allowed (the console's property and the
	 * endpoint's access)
	 * @param refresh how often the page reads again
	 */
	DbLockConsoleHandler(String path, DbLockEndpoint endpoint, @Nullable LockRepository repository,
			ConsoleGuard guard, boolean releaseAllowed, Duration refresh) {
		this.path = path;
		this.endpoint = endpoint;
		this.repository = repository;
		this.guard = guard;
		this.releaseAllowed = releaseAllowed;
		this.refresh = refresh;
	}

	/**
	 * The routes under the console's path, each behind the guard.
	 * @return the routes
	 */
	RouterFunction<ServerResponse> routes() {
		String path = this.path;
		HandlerFilterFunction<ServerResponse, ServerResponse> guarded = (request, next) -> {
			this.guard.check(request.servletRequest());
			return next.handle(request);
		};
		return RouterFunctions.route()
			.GET(path, this::page)
			.GET(path + "/", this::page)
			.GET(path + "/api/locks", this::locks)
			.POST(path + "/api/release", this::release)
			.resources(path + "/assets/**", new ClassPathResource(ConsolePage.LOCATION + "assets/"))
			.filter(guarded)
			.build();
	}

	/** The page, its base the console's path under the context (and servlet) path, with the request's CSRF token. */
	ServerResponse page(ServerRequest request) {
		HttpServletRequest servletRequest = request.servletRequest();
		String base = request.requestPath().contextPath().value() + this.path;
		return ServerResponse.ok()
			.contentType(HTML)
			.cacheControl(CacheControl.noStore())
			.header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
			.header("X-Content-Type-Options", "nosniff")
			.body(this.page.render(base, this.guard.csrf(servletRequest)));
	}

	/**
	 * What the endpoint's read operation returns ({@code report}), the database's time now
	 * ({@code clock}), whether a release is allowed and how often to read again.
	 */
	ServerResponse locks(ServerRequest request) {
		Map<String, Object> snapshot = new LinkedHashMap<>();
		snapshot.put("report", this.endpoint.locks());
		snapshot.put("clock", clock());
		snapshot.put("releaseAllowed", this.releaseAllowed);
		snapshot.put("refreshMillis", this.refresh.toMillis());
		return ServerResponse.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.cacheControl(CacheControl.noStore())
			.body(snapshot);
	}

	/**
	 * The endpoint's delete operation for the {@code key}, {@code owner} and {@code token}
	 * parameters: its answer, or a 403 where a release is not allowed, a 400 where a
	 * parameter is missing or the token is not a number.
	 */
	ServerResponse release(ServerRequest request) {
		if (!this.releaseAllowed) {
			return error(HttpStatus.FORBIDDEN, "Force release is not allowed: set db-lock.console.allow-release=true "
					+ "(and leave the dblock endpoint's access unrestricted)");
		}
		Optional<String> key = request.param("key");
		Optional<String> owner = request.param("owner");
		Optional<String> token = request.param("token");
		if (key.isEmpty() || owner.isEmpty() || token.isEmpty()) {
			return error(HttpStatus.BAD_REQUEST, "A release names the lock's key, owner and token");
		}
		long fencingToken;
		try {
			fencingToken = Long.parseLong(token.get());
		}
		catch (NumberFormatException ex) {
			return error(HttpStatus.BAD_REQUEST, "A lock's token is a number, got '" + token.get() + "'");
		}
		String user = request.principal().map(Principal::getName).orElse("an unauthenticated user");
		logger.warn("Force-release of lock '" + key.get() + "' (owner " + owner.get() + ", token " + fencingToken
				+ ") requested through the db-lock console by " + user);
		return ServerResponse.ok()
			.contentType(MediaType.APPLICATION_JSON)
			.body(this.endpoint.release(key.get(), owner.get(), fencingToken));
	}

	/** The database's time, which the endpoint's times are in; this JVM's where it cannot be read. */
	private Map<String, Object> clock() {
		if (this.repository != null) {
			try {
				return Map.of("now", this.repository.databaseTime(), "source", "database");
			}
			catch (UnsupportedOperationException ex) {
				// a repository of the application's own: its rows' times are shown against this JVM's clock
			}
		}
		return Map.of("now", Instant.now(), "source", "application");
	}

	private static ServerResponse error(HttpStatus status, String message) {
		return ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON).body(Map.of("error", message));
	}

}
