package io.github.dblock.nodes;

import io.github.dblock.testsupport.NetworkNamespaces;
import io.github.dblock.testsupport.OwnServer;
import io.github.dblock.testsupport.PostgreSqlFailoverPair;

/**
 * The fault campaign on a PostgreSQL primary with a synchronous standby: each kill of the
 * database kills the primary and fails over to the standby (promoted; the killed server
 * rebuilt as its new synchronous standby), the nodes' URL naming both for the primary.
 */
class PostgreSqlFailoverFaultCampaignTests extends PostgreSqlFaultCampaignTests {

	@Override
	protected OwnServer startServer(NetworkNamespaces namespaces) throws Exception {
		return PostgreSqlFailoverPair.startListeningOn(namespaces.hostAddresses(), "10.231.0.0/16",
				PostgreSqlFaultCampaignTests::limitIdleTransactions);
	}

	@Override
	protected double defaultMinutes() {
		return 1;
	}

}
