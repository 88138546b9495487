package io.github.dblock.jdbc;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JDBC query timeout of a lock statement beside its network timeout.
 */
class DeadlineTemplateTests {

	@ParameterizedTest
	@ValueSource(longs = { 1, 999, 1000, 1001, 1999, 2000, 2001 })
	void whereTheDriverCancelsFromTheClientTheQueryTimeoutIsAtLeastASecondPastTheNetworkTimeout(long networkMillis) {
		assertThat(DeadlineTemplate.queryTimeoutSeconds(networkMillis, true) * 1000L - networkMillis)
			.isGreaterThanOrEqualTo(1000);
	}

	@ParameterizedTest
	@ValueSource(longs = { 1, 999, 1000, 1001, 1999, 2000, 2001 })
	void whereTheServerEnforcesItTheQueryTimeoutIsTheNetworkTimeoutInWholeSecondsRoundedUp(long networkMillis) {
		int seconds = DeadlineTemplate.queryTimeoutSeconds(networkMillis, false);
		assertThat(seconds * 1000L).isGreaterThanOrEqualTo(networkMillis).isLessThan(networkMillis + 1000);
	}

}
