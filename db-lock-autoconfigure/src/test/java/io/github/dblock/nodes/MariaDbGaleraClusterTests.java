package io.github.dblock.nodes;

import java.time.Duration;

import io.github.dblock.testsupport.GaleraCluster;
import io.github.dblock.testsupport.OwnServer;

/**
 * The fault test on a 3-member MariaDB Galera cluster of the test's own: two processes of
 * eight threads with connections spread over every member
 * ({@code jdbc:mariadb:loadbalance:}) take one key in the lease mode and increment a fenced
 * counter; one member is killed ({@code kill -9}) mid-run and started again, and rejoins by
 * state transfer. Certification conflicts between members are attempts that did not
 * acquire; the counter loses nothing acknowledged and the tokens of accepted writes keep
 * increasing.
 */
class MariaDbGaleraClusterTests extends DatabaseRestartContractTests {

	@Override
	protected OwnServer start() throws Exception {
		return GaleraCluster.start(3);
	}

	@Override
	protected boolean callersSeeTheOutage() {
		return false;
	}

	@Override
	protected Duration driverFailover() {
		return GaleraCluster.DRIVER_FAILOVER_TIME;
	}

	/** Throughput on the cluster and its certification conflicts per acquisition. */
	@Override
	protected void report(OwnServer server, long acquisitions, double seconds) {
		long conflicts = ((GaleraCluster) server).certificationConflicts();
		System.out.printf("galera: %d acquisitions with their fenced increment in %.1f s (%.0f/s, the outage "
				+ "included), %d certification conflicts counted by the members (%.3f per acquisition; the "
				+ "restarted member's count starts again)%n", acquisitions, seconds, acquisitions / seconds, conflicts,
				(double) conflicts / Math.max(1, acquisitions));
	}

}
