package io.github.dblock.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DriverFailoverCheck}: which URLs fail over inside a statement, and for how long.
 */
class DriverFailoverCheckTests {

	@Test
	void aUrlOfOneHostDoesNotFailOver() {
		assertThat(DriverFailoverCheck.failoverTime("jdbc:mariadb://db:3306/app")).isNull();
		assertThat(DriverFailoverCheck.failoverTime("jdbc:postgresql://a,b/app?targetServerType=primary")).isNull();
		assertThat(DriverFailoverCheck.warning("jdbc:mariadb://db:3306/app", Duration.ofSeconds(2))).isNull();
	}

	@Test
	void theDriversRetriesTimesItsConnectTimeoutAndPauseIsTheFailoverTime() {
		assertThat(DriverFailoverCheck
			.failoverTime("jdbc:mariadb:loadbalance://m1,m2,m3/app?sessionVariables=wsrep_sync_wait=15&retriesAllDown=2"
					+ "&connectTimeout=500"))
			.isEqualTo(Duration.ofMillis(1500));
		assertThat(DriverFailoverCheck.failoverTime("jdbc:mariadb:sequential://m1,m2/app?ConnectTimeout=1000&retriesAllDown=3"))
			.isEqualTo(Duration.ofMillis(3750));
	}

	@Test
	void theDriversDefaultsAreWarnedOfWithSettingsThatFitTheStatementTimeout() {
		String warning = DriverFailoverCheck.warning("jdbc:mariadb:loadbalance://m1,m2,m3/app?connectTimeout=1000",
				Duration.ofSeconds(2));
		// 120 tries by default
		assertThat(warning).contains("loadbalance")
			.contains("(connectTimeout + 250ms) = 2m30s")
			.contains("db-lock.statement-timeout (2s)")
			.contains(DriverFailoverCheck.RECOMMENDED);
		assertThat(DriverFailoverCheck.warning("jdbc:mariadb:loadbalance://m1,m2,m3/app?" + DriverFailoverCheck.RECOMMENDED,
				Duration.ofSeconds(2)))
			.isNull();
	}

}
