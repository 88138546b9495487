package io.github.dblock.jpa;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.context.annotation.Import;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;

/**
 * An application on Hibernate and Spring Data JPA, whose transactions are a
 * {@code JpaTransactionManager}'s, with a pool that hands out connections with autocommit
 * off (a common Hibernate tuning).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EntityScan(basePackageClasses = JpaCounter.class)
@EnableJpaRepositories(basePackageClasses = JpaCounterRepository.class)
@Import(JpaCounterService.class)
public class JpaCounterApplication {

	/** The settings every test of this application uses, besides the database's. */
	static final String[] PROPERTIES = { "spring.jpa.hibernate.ddl-auto=update", "spring.flyway.enabled=false",
			"spring.datasource.hikari.auto-commit=false", "spring.datasource.hikari.maximum-pool-size=12",
			"spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true",
			"spring.jpa.open-in-view=false" };

}
