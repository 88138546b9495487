package io.github.dblock.nodes;

import io.github.dblock.testsupport.GaleraCluster;
import io.github.dblock.testsupport.NetworkNamespaces;
import io.github.dblock.testsupport.OwnServer;

/**
 * The fault campaign on a 3-member MariaDB Galera cluster of the test's own, the nodes'
 * connections spread over every member ({@code jdbc:mariadb:loadbalance:}); each kill of the
 * database kills a member, which rejoins by state transfer when started again.
 */
class MariaDbGaleraFaultCampaignTests extends MariaDbFaultCampaignTests {

	@Override
	protected OwnServer startServer(NetworkNamespaces namespaces) throws Exception {
		return GaleraCluster.startListeningOn(3, namespaces.hostAddresses(), "10.231.%", "--idle-transaction-timeout=5");
	}

	@Override
	protected String nodeUrl(OwnServer server, NetworkNamespaces namespaces, int n) {
		return server.url().replace("127.0.0.1", namespaces.hostAddress(n)) + "&socketTimeout=10000";
	}

	@Override
	protected double defaultMinutes() {
		return 1;
	}

}
