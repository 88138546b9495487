package io.github.dblock.nodes;

import java.util.ArrayList;
import java.util.List;

import io.github.dblock.testsupport.NetworkNamespaces;
import io.github.dblock.testsupport.OwnMariaDb;
import io.github.dblock.testsupport.OwnServer;

class MariaDbFaultCampaignTests extends FaultCampaignContractTests {

	@Override
	protected OwnServer startServer(NetworkNamespaces namespaces) throws Exception {
		// a transaction whose client was cut off ends after 5 s idle, with its row locks
		return OwnMariaDb.startListeningOn(namespaces.hostAddresses(), "10.231.%", "--idle-transaction-timeout=5");
	}

	@Override
	protected String nodeUrl(OwnServer server, NetworkNamespaces namespaces, int n) {
		return server.url().replace("127.0.0.1", namespaces.hostAddress(n)) + "?connectTimeout=1000&socketTimeout=10000";
	}

	@Override
	protected List<String> stallTrigger(String table) {
		List<String> statements = new ArrayList<>();
		for (String stalled : List.of(table, table + "_rw", table + "_fair_queue")) {
			for (String event : List.of("INSERT", "UPDATE")) {
				statements.add("CREATE TRIGGER " + stalled + "_stall_" + event.toLowerCase(java.util.Locale.ROOT)
						+ " BEFORE " + event + " ON " + stalled + " FOR EACH ROW BEGIN DECLARE s INT;"
						+ " SELECT stall_seconds INTO s FROM db_lock_test_campaign_stall WHERE id = 1;"
						+ " IF s > 0 THEN DO SLEEP(s); END IF; END");
			}
		}
		return statements;
	}

}
