package io.github.dblock.console;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.authentication.AuthenticationCredentialsNotFoundException;
import org.springframework.security.authentication.AuthenticationTrustResolver;
import org.springframework.security.authentication.AuthenticationTrustResolverImpl;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.web.csrf.CsrfToken;

/**
 * The console under Spring Security: an authenticated user, holding one of the configured
 * roles if any are. A refusal is Spring Security's own exception, so that its
 * {@code ExceptionTranslationFilter} answers as it does for the rest of the application
 * (a login page or a 401 for an anonymous user, a 403 for a user without the role).
 */
final class SpringSecurityConsoleGuard implements ConsoleGuard {

	private final AuthenticationTrustResolver trustResolver = new AuthenticationTrustResolverImpl();

	private final Set<String> authorities;

	/**
	 * Creates a guard.
	 * @param roles the roles of which a user needs one, with or without {@code ROLE_};
	 * empty for any authenticated user
	 */
	SpringSecurityConsoleGuard(List<String> roles) {
		this.authorities = roles.stream()
			.map(String::strip)
			.filter((role) -> !role.isEmpty())
			.map((role) -> role.startsWith("ROLE_") ? role : "ROLE_" + role)
			.collect(Collectors.toUnmodifiableSet());
	}

	@Override
	public void check(HttpServletRequest request) {
		Authentication authentication = SecurityContextHolder.getContextHolderStrategy()
			.getContext()
			.getAuthentication();
		if (authentication == null || !authentication.isAuthenticated()
				|| this.trustResolver.isAnonymous(authentication)) {
			throw new AuthenticationCredentialsNotFoundException("The db-lock console needs an authenticated user");
		}
		if (!this.authorities.isEmpty() && authentication.getAuthorities()
			.stream()
			.map(GrantedAuthority::getAuthority)
			.noneMatch(this.authorities::contains)) {
			throw new AccessDeniedException("The db-lock console needs one of " + this.authorities);
		}
	}

	@Override
	public @Nullable Csrf csrf(HttpServletRequest request) {
		if (request.getAttribute(CsrfToken.class.getName()) instanceof CsrfToken token) {
			return new Csrf(token.getHeaderName(), token.getParameterName(), token.getToken());
		}
		return null;
	}

}
