package io.github.dblock.console;

import io.github.dblock.actuate.DbLockEndpoint;
import io.github.dblock.autoconfigure.endpoint.DbLockEndpointAutoConfiguration;
import io.github.dblock.jdbc.LockRepository;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The db-lock console ({@code db-lock.console.*}): a page at {@code db-lock.console.path}
 * that shows, live, what the {@code dblock} actuator endpoint reads, in a servlet web
 * application with Spring MVC, where the endpoint's bean ({@link DbLockEndpoint}) exists
 * (its access not {@code none}, and exposed). Where Spring Security's web support is on the
 * classpath, the page and its operations need an authenticated user (holding one of
 * {@code db-lock.console.roles} if set), and a release needs the CSRF token. A release is
 * answered only with {@code db-lock.console.allow-release=true} and the endpoint's access
 * unrestricted; otherwise it is refused with a 403 and the page shows no release button.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DbLockEndpointAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ RouterFunction.class, Endpoint.class, EndpointAccessResolver.class })
@ConditionalOnBean(DbLockEndpoint.class)
@ConditionalOnBooleanProperty(name = "db-lock.console.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbLockConsoleProperties.class)
public final class DbLockConsoleAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "dbLockConsoleRouterFunction")
	RouterFunction<ServerResponse> dbLockConsoleRouterFunction(DbLockEndpoint endpoint,
			ObjectProvider<LockRepository> repository, DbLockConsoleProperties properties,
			ObjectProvider<EndpointAccessResolver> accessResolver, ObjectProvider<ConsoleGuard> guard) {
		boolean releaseAllowed = properties.isAllowRelease()
				&& endpointAccess(accessResolver.getIfAvailable()) == Access.UNRESTRICTED;
		DbLockConsoleHandler handler = new DbLockConsoleHandler(properties.getPath(), endpoint,
				repository.getIfUnique(), guard.getIfAvailable(() -> ConsoleGuard.OPEN), releaseAllowed,
				properties.getRefresh());
		return handler.routes();
	}

	/** The endpoint's access as the actuator resolves it ({@code management.endpoint.dblock.access}). */
	private static Access endpointAccess(@Nullable EndpointAccessResolver resolver) {
		MergedAnnotation<Endpoint> endpoint = MergedAnnotations.from(DbLockEndpoint.class).get(Endpoint.class);
		Access defaultAccess = endpoint.getEnum("defaultAccess", Access.class);
		if (resolver == null) {
			return defaultAccess;
		}
		return resolver.accessFor(EndpointId.of(endpoint.getString("id")), defaultAccess);
	}

	/** Apart, so that Spring Security's classes are loaded only where they are present. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.security.web.SecurityFilterChain")
	static class SecuredConsole {

		@Bean
		ConsoleGuard dbLockConsoleGuard(DbLockConsoleProperties properties) {
			return new SpringSecurityConsoleGuard(properties.getRoles());
		}

	}

}
