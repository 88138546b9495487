package io.github.dblock.nodes;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockAutoConfiguration;
import io.github.dblock.autoconfigure.DbLockConfigurationException;
import io.github.dblock.testsupport.OwnMariaDb;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code DataSource} on a read-only MariaDB server (as a replica is, {@code read_only=ON};
 * a server of the test's own) fails start-up, even for a user who could still write there.
 */
class MariaDbReadOnlyTests {

	@Test
	void aDataSourceOnAReadOnlyServerFailsStartUp() throws Exception {
		try (OwnMariaDb server = OwnMariaDb.start()) {
			try (HikariDataSource dataSource = NodeSupport.dataSource(server.url(), server.user(), "", 1)) {
				new JdbcTemplate(dataSource).execute("SET GLOBAL read_only = ON");
			}
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
						DataSourceTransactionManagerAutoConfiguration.class, DbLockAutoConfiguration.class))
				.withPropertyValues("spring.datasource.url=" + server.url(), "spring.datasource.username=" + server.user())
				.run((context) -> assertThat(context).getFailure()
					.rootCause()
					.isInstanceOf(DbLockConfigurationException.class)
					.hasMessageContaining("cannot hold locks: the server is read-only (read_only=ON)"));
		}
	}

}
