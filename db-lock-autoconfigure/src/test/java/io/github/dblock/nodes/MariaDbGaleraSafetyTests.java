package io.github.dblock.nodes;

import java.nio.file.Path;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.GaleraCluster;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The randomized safety checker on a 3-member MariaDB Galera cluster of the test's own:
 * three node processes whose connections are spread over every member
 * ({@code jdbc:mariadb:loadbalance:}), so that one key's acquisitions, renewals and
 * releases reach different members and conflict in certification; their histories show
 * no overlap, no token out of order and no refusal without a holder, as on one server.
 */
class MariaDbGaleraSafetyTests {

	@Test
	void aRandomizedHistoryOfThreeNodesOverThreeMembersHasNoOverlapNoTokenOutOfOrderAndNoRefusalWithoutAHolder(
			@TempDir Path dir) throws Exception {
		try (GaleraCluster cluster = GaleraCluster.start(3)) {
			try (HikariDataSource dataSource = NodeSupport.dataSource(cluster.url(), cluster.user(), "", 2)) {
				new DbLockSchemaMigration(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE)).afterPropertiesSet();
			}
			SafetyChecker.check(new TestDatabase.Connection(cluster.url(), cluster.user(), "", false), "galera", dir);
		}
	}

}
