package io.github.dblock.console;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * An application with db-lock's starter, Spring MVC, the actuator and Spring Security, on
 * an embedded H2: whose own filter chain lets every request through, so that what keeps
 * the console closed is the console's own check. Two users: {@code operator} (role
 * {@code OPERATOR}) and {@code guest} (no role).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class ConsoleTestApplication {

	static final String PASSWORD = "secret";

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(
				User.withUsername("operator").password("{noop}" + PASSWORD).roles("OPERATOR").build(),
				User.withUsername("guest").password("{noop}" + PASSWORD).roles().build());
	}

	@Bean
	SecurityFilterChain permitAll(HttpSecurity http) {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.formLogin(Customizer.withDefaults())
			.httpBasic(Customizer.withDefaults())
			.build();
	}

}
