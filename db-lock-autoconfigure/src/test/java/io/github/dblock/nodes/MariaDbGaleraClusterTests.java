package io.github.dblock.nodes;

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

}
