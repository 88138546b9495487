package io.github.dblock.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The sample application: an order-payment REST service whose {@code pay} is guarded by
 * {@code @DbLock}.
 */
@SpringBootApplication
public class SampleApplication {

	/**
	 * Starts the application.
	 * @param args command-line arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
