package io.github.dblock.app;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * A small application using db-lock the way a user would: auto-configuration and an
 * annotated service.
 */
@SpringBootConfiguration
// the transactions of this application are a DataSourceTransactionManager's; JpaCounterApplication has JPA's
@EnableAutoConfiguration(excludeName = { "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
		"org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration" })
@Import(CounterService.class)
public class CounterApplication {

}
