package io.github.dblock.console;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.endpoint.DbLockEndpointAutoConfiguration;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockRepository;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.core.convert.support.ConfigurableConversionService;
import org.springframework.http.MediaType;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.authentication.AuthenticationCredentialsNotFoundException;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.security.web.csrf.DefaultCsrfToken;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.servlet.function.RouterFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link DbLockConsoleAutoConfiguration}: when the console is there, its routes
 * (through MockMvc), its properties and its checks, on an embedded H2 per test.
 */
class DbLockConsoleAutoConfigurationTests {

	private static final AtomicLong databases = new AtomicLong();

	private static final String ROUTES = "dbLockConsoleRouterFunction";

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				DbLockAutoConfiguration.class, EndpointAutoConfiguration.class, DbLockEndpointAutoConfiguration.class,
				JacksonAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class,
				WebMvcAutoConfiguration.class, DbLockConsoleAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=dblock")
		.withInitializer((context) -> TestPropertyValues
			.of("spring.datasource.url=jdbc:h2:mem:console" + databases.incrementAndGet() + ";DB_CLOSE_DELAY=-1")
			.applyTo(context));

	/** Without Spring Security's web support on the classpath. */
	private final WebApplicationContextRunner openRunner = this.contextRunner
		.withClassLoader(new FilteredClassLoader(SecurityFilterChain.class));

	@AfterEach
	void clearSecurityContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void servesThePageItsAssetsAndTheLocksWithoutSpringSecurity() {
		this.openRunner.run((context) -> {
			assertThat(context).hasBean(ROUTES).hasSingleBean(DbLockConsoleProperties.class)
				.doesNotHaveBean(ConsoleGuard.class);
			LockRepository repository = context.getBean(LockRepository.class);
			repository.tryAcquire("order:7", "node-b/4242/0badcafe#1", Duration.ofMinutes(1)).orElseThrow();
			MockMvc mvc = mvc(context);
			mvc.perform(get("/db-lock"))
				.andExpect(status().isOk())
				.andExpect(content().contentTypeCompatibleWith(MediaType.TEXT_HTML))
				.andExpect(header().string("Cache-Control", "no-store"))
				.andExpect(header().string("Content-Security-Policy",
						org.hamcrest.Matchers.containsString("script-src 'self'")))
				.andExpect(content().string(org.hamcrest.Matchers.containsString(
						"<meta name=\"db-lock-console-base\" content=\"/db-lock\">")))
				.andExpect(content().string(org.hamcrest.Matchers.containsString("src=\"/db-lock/assets/console.js\"")))
				.andExpect(content().string(org.hamcrest.Matchers.not(org.hamcrest.Matchers.containsString("_csrf"))));
			mvc.perform(get("/db-lock/")).andExpect(status().isOk());
			mvc.perform(get("/db-lock/assets/console.css")).andExpect(status().isOk());
			mvc.perform(get("/db-lock/assets/console.js"))
				.andExpect(status().isOk())
				.andExpect(content().string(org.hamcrest.Matchers.containsString("/api/locks")));
			mvc.perform(get("/db-lock/api/locks"))
				.andExpect(status().isOk())
				.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_JSON))
				.andExpect(jsonPath("$.report.rows[0].key").value("order:7"))
				.andExpect(jsonPath("$.report.rows[0].owner").value("node-b/4242/0badcafe#1"))
				.andExpect(jsonPath("$.report.truncated").value(false))
				.andExpect(jsonPath("$.report.heldHere").isArray())
				.andExpect(jsonPath("$.report.migrations[0].version").value("1"))
				.andExpect(jsonPath("$.clock.source").value("database"))
				.andExpect(jsonPath("$.releaseAllowed").value(false))
				.andExpect(jsonPath("$.refreshMillis").value(2000));
		});
	}

	@Test
	void releaseIsRefusedByDefault() {
		this.openRunner.run((context) -> {
			Lease lease = context.getBean(LockRepository.class)
				.tryAcquire("order:8", "node-b/4242/0badcafe#2", Duration.ofMinutes(1))
				.orElseThrow();
			mvc(context).perform(release(lease.key(), lease.owner(), Long.toString(lease.token())))
				.andExpect(status().isForbidden())
				.andExpect(jsonPath("$.error").value(org.hamcrest.Matchers.containsString("allow-release")));
			assertThat(keys(context)).contains("order:8");
		});
	}

	@Test
	void releaseGoesThroughTheEndpointWhenAllowed() {
		this.openRunner.withPropertyValues("db-lock.console.allow-release=true").run((context) -> {
			Lease lease = context.getBean(LockRepository.class)
				.tryAcquire("order:9", "node-b/4242/0badcafe#3", Duration.ofMinutes(1))
				.orElseThrow();
			MockMvc mvc = mvc(context);
			mvc.perform(get("/db-lock/api/locks")).andExpect(jsonPath("$.releaseAllowed").value(true));
			mvc.perform(release(lease.key(), lease.owner(), Long.toString(lease.token() + 1)))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.released").value(false));
			mvc.perform(release(lease.key(), lease.owner(), "seven")).andExpect(status().isBadRequest());
			mvc.perform(post("/db-lock/api/release").param("key", lease.key())).andExpect(status().isBadRequest());
			assertThat(keys(context)).contains("order:9");
			mvc.perform(release(lease.key(), lease.owner(), Long.toString(lease.token())))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.key").value("order:9"))
				.andExpect(jsonPath("$.released").value(true));
			assertThat(keys(context)).doesNotContain("order:9");
		});
	}

	@Test
	void releaseIsRefusedWhereTheEndpointIsReadOnly() {
		this.openRunner
			.withPropertyValues("db-lock.console.allow-release=true", "management.endpoint.dblock.access=read-only")
			// as in a SpringApplication, whose conversion service reads "read-only" as READ_ONLY
			.withInitializer((context) -> context.getEnvironment()
				.setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
			.run((context) -> {
				Lease lease = context.getBean(LockRepository.class)
					.tryAcquire("order:10", "node-b/4242/0badcafe#4", Duration.ofMinutes(1))
					.orElseThrow();
				MockMvc mvc = mvc(context);
				mvc.perform(get("/db-lock/api/locks")).andExpect(jsonPath("$.releaseAllowed").value(false));
				mvc.perform(release(lease.key(), lease.owner(), Long.toString(lease.token())))
					.andExpect(status().isForbidden());
				assertThat(keys(context)).contains("order:10");
			});
	}

	@Test
	void servesTheConsoleAtTheConfiguredPath() {
		this.openRunner.withPropertyValues("db-lock.console.path=/ops/locks/", "db-lock.console.refresh=500ms")
			.run((context) -> {
				assertThat(context.getBean(DbLockConsoleProperties.class).getPath()).isEqualTo("/ops/locks");
				MockMvc mvc = mvc(context);
				mvc.perform(get("/ops/locks"))
					.andExpect(status().isOk())
					.andExpect(content().string(org.hamcrest.Matchers
						.containsString("<meta name=\"db-lock-console-base\" content=\"/ops/locks\">")));
				mvc.perform(get("/shop/ops/locks/").contextPath("/shop"))
					.andExpect(status().isOk())
					.andExpect(content().string(org.hamcrest.Matchers
						.containsString("<meta name=\"db-lock-console-base\" content=\"/shop/ops/locks\">")));
				mvc.perform(get("/ops/locks/api/locks")).andExpect(jsonPath("$.refreshMillis").value(500));
				mvc.perform(get("/db-lock")).andExpect(status().isNotFound());
			});
	}

	@Test
	void aPathThatIsNotOneFailsAtStartUpNamingTheProperty() {
		for (String path : List.of("db-lock", "/", "/locks/**", "/locks/{id}")) {
			this.openRunner.withPropertyValues("db-lock.console.path=" + path)
				.run((context) -> assertThat(context).getFailure()
					.rootCause()
					.hasMessageContaining("db-lock.console.path"));
		}
	}

	@Test
	void aRefreshUnder100msFailsAtStartUpNamingTheProperty() {
		this.openRunner.withPropertyValues("db-lock.console.refresh=10ms")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("db-lock.console.refresh"));
	}

	@Test
	void noConsoleWithoutTheDbLockEndpoint() {
		this.openRunner.withPropertyValues("management.endpoints.web.exposure.include=health")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ROUTES));
	}

	@Test
	void noConsoleWhenDisabled() {
		this.openRunner.withPropertyValues("db-lock.console.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ROUTES));
	}

	@Test
	void noConsoleWithoutSpringMvc() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(RouterFunction.class))
			.run((context) -> assertThat(context).doesNotHaveBean(ROUTES));
	}

	@Test
	void noConsoleOutsideAServletWebApplication() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					DbLockAutoConfiguration.class, EndpointAutoConfiguration.class,
					DbLockEndpointAutoConfiguration.class, DbLockConsoleAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=dblock",
					"spring.datasource.url=jdbc:h2:mem:console-plain;DB_CLOSE_DELAY=-1")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ROUTES));
	}

	@Test
	void withSpringSecurityAnAnonymousUserIsRefused() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(ConsoleGuard.class);
			// MockMvc has no filter chain here: the exception that Spring Security's own filter would handle
			assertThatException().isThrownBy(() -> mvc(context).perform(get("/db-lock/api/locks")))
				.havingRootCause()
				.isInstanceOf(AuthenticationCredentialsNotFoundException.class);
		});
	}

	@Test
	void withSpringSecurityAndRolesAUserNeedsOneOfThem() {
		this.contextRunner.withPropertyValues("db-lock.console.roles=OPERATOR,ROLE_ADMIN").run((context) -> {
			MockMvc mvc = mvc(context);
			SecurityContextHolder.getContext().setAuthentication(new TestingAuthenticationToken("ann", "", "ROLE_USER"));
			assertThatException().isThrownBy(() -> mvc.perform(get("/db-lock/api/locks")))
				.havingRootCause()
				.isInstanceOf(AccessDeniedException.class);
			assertThatException().isThrownBy(() -> mvc.perform(get("/db-lock/assets/console.js")))
				.havingRootCause()
				.isInstanceOf(AccessDeniedException.class);
			SecurityContextHolder.getContext()
				.setAuthentication(new TestingAuthenticationToken("bob", "", "ROLE_OPERATOR"));
			mvc.perform(get("/db-lock/api/locks")).andExpect(status().isOk());
			SecurityContextHolder.getContext()
				.setAuthentication(new TestingAuthenticationToken("eve", "", "ROLE_ADMIN"));
			mvc.perform(get("/db-lock/api/locks")).andExpect(status().isOk());
		});
	}

	@Test
	void withSpringSecurityThePageCarriesTheCsrfToken() {
		this.contextRunner.run((context) -> {
			SecurityContextHolder.getContext().setAuthentication(new TestingAuthenticationToken("bob", "", "ROLE_X"));
			CsrfToken token = new DefaultCsrfToken("X-CSRF-TOKEN", "_csrf", "t0k3n<&>");
			mvc(context).perform(get("/db-lock").requestAttr(CsrfToken.class.getName(), token))
				.andExpect(status().isOk())
				.andExpect(content().string(org.hamcrest.Matchers.allOf(
						org.hamcrest.Matchers.containsString("<meta name=\"_csrf\" content=\"t0k3n&lt;&amp;&gt;\">"),
						org.hamcrest.Matchers.containsString("<meta name=\"_csrf_header\" content=\"X-CSRF-TOKEN\">"))));
		});
	}

	private static MockMvc mvc(AssertableWebApplicationContext context) {
		return MockMvcBuilders.webAppContextSetup(context).build();
	}

	private static org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder release(String key,
			String owner, String token) {
		return post("/db-lock/api/release").param("key", key).param("owner", owner).param("token", token);
	}

	private static List<String> keys(AssertableWebApplicationContext context) {
		return context.getBean(LockRepository.class).rows(100).stream().map((row) -> row.key()).toList();
	}

}
