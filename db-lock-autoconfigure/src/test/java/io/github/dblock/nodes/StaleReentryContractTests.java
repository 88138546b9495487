package io.github.dblock.nodes;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A re-entry never reuses a lease that may have expired, across two nodes that are
 * separate JVM processes: node A re-enters a key whose fixed lease ran out and that node B
 * took meanwhile (see {@link ReentryNode} for the steps).
 */
abstract class StaleReentryContractTests {

	protected abstract TestDatabase database();

	@Test
	void aReentryIntoAnExpiredLeaseTakesAFreshOneThatClosingTheOuterHandleDoesNotEnd() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_step (id INT PRIMARY KEY, step INT)");
			jdbc.update("DELETE FROM db_lock_test_step");
			jdbc.update("INSERT INTO db_lock_test_step (id, step) VALUES (1, 0)");
			List<Map<String, String>> nodes = NodeSupport.run(2, ReentryNode.class, database().connection(),
					(node) -> new Object[] { (node == 0) ? "A" : "B", "stale-reentry" });
			Map<String, String> a = nodes.get(0);
			Map<String, String> b = nodes.get(1);
			System.out.printf(
					"%s stale re-entry: A's outer token %s (expires %s), B's token %s (acquired %s), A's inner token %s; "
							+ "A's outer held after B took it %s, lost %s; inner held after the outer closed %s; "
							+ "B refused while A's inner was open %s%n",
					database(), a.get("outerToken"), a.get("outerExpiresAt"), b.get("token"), b.get("acquiredAt"),
					a.get("innerToken"), a.get("outerHeldAfterB"), a.get("outerLost"), a.get("innerHeldAfterOuterClosed"),
					b.get("refusedWhileInnerOpen"));
			SoftAssertions.assertSoftly((softly) -> {
				softly.assertThat(Instant.parse(b.get("acquiredAt")))
					.as("B's acquisition, not before A's fixed lease ended")
					.isAfterOrEqualTo(Instant.parse(a.get("outerExpiresAt")));
				softly.assertThat(Long.parseLong(b.get("token"))).as("B's token").isGreaterThan(Long.parseLong(a.get("outerToken")));
				softly.assertThat(a.get("outerHeldAfterB")).as("A's outer handle held after B took the key").isEqualTo("false");
				softly.assertThat(Long.parseLong(a.get("innerToken")))
					.as("A's re-entry token, after B's (not A's stale lease)")
					.isGreaterThan(Long.parseLong(b.get("token")));
				softly.assertThat(a.get("innerHeldAfterOuterClosed"))
					.as("A's inner handle held after its outer one was closed")
					.isEqualTo("true");
				softly.assertThat(b.get("refusedWhileInnerOpen"))
					.as("B's zero-wait try refused while A's inner handle is open")
					.isEqualTo("true");
			});
		}
	}

}
