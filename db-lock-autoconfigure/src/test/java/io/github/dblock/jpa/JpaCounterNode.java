package io.github.dblock.jpa;

import io.github.dblock.testsupport.Concurrently;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One node of the JPA application, as a process of its own: threads that increment one
 * counter through Hibernate under {@code @DbLock}. Prints {@code increments=N} and exits.
 */
public final class JpaCounterNode {

	private JpaCounterNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, threads, increments per thread
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[3]);
		int increments = Integer.parseInt(args[4]);
		try (ConfigurableApplicationContext context = start(args[0], args[1], args[2])) {
			JpaCounterService service = context.getBean(JpaCounterService.class);
			Concurrently.run(threads, (thread) -> {
				for (int i = 0; i < increments; i++) {
					service.increment(1);
				}
			});
		}
		System.out.println("increments=" + threads * increments);
	}

	static ConfigurableApplicationContext start(String url, String user, String password) {
		return new SpringApplicationBuilder(JpaCounterApplication.class).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties("spring.datasource.url=" + url, "spring.datasource.username=" + user,
					"spring.datasource.password=" + password)
			.properties(JpaCounterApplication.PROPERTIES)
			.run();
	}

}
