package io.github.dblock.jdbc;

import java.sql.Connection;
import java.time.Duration;

import io.github.dblock.jdbc.dialect.H2Dialect;
import io.github.dblock.jdbc.dialect.MariaDbDialect;
import io.github.dblock.jdbc.dialect.PostgreSqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JDBC query timeout of a lock statement beside its network timeout.
 */
class DeadlineTemplateTests {

	@ParameterizedTest
	@ValueSource(longs = { 1, 999, 1000, 1001, 1999, 2000, 2001 })
	void whereTheServerEnforcesItTheQueryTimeoutIsTheNetworkTimeoutInWholeSecondsRoundedUp(long networkMillis) {
		int seconds = DeadlineTemplate.queryTimeoutSeconds(networkMillis);
		assertThat(seconds * 1000L).isGreaterThanOrEqualTo(networkMillis).isLessThan(networkMillis + 1000);
	}

	@Test
	void onPostgreSqlWhosDriverCancelsFromTheClientTheLockStatementsHaveNoQueryTimeoutOthersHaveOne() throws Exception {
		SimpleDriverDataSource h2 = new SimpleDriverDataSource(new org.h2.Driver(), "jdbc:h2:mem:deadline", "sa", "");
		try (Connection connection = h2.getConnection()) {
			// -1: JdbcTemplate sets none on its statements
			assertThat(queryTimeout(h2, connection, new PostgreSqlDialect("db_lock"))).isNotPositive();
			assertThat(queryTimeout(h2, connection, new MariaDbDialect("db_lock"))).isEqualTo(3);
			assertThat(queryTimeout(h2, connection, new H2Dialect("db_lock"))).isEqualTo(3);
		}
	}

	private static int queryTimeout(SimpleDriverDataSource dataSource, Connection connection, SqlDialect dialect) {
		return new LockConnections(dataSource, dialect, Duration.ofMillis(1500)).template(connection, 1000).getQueryTimeout();
	}

}
