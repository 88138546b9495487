package io.github.dblock.app;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * A small application using db-lock the way a user would: auto-configuration and an
 * annotated service.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(CounterService.class)
public class CounterApplication {

}
