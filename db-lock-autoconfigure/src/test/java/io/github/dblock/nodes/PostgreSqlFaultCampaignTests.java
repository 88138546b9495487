package io.github.dblock.nodes;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.github.dblock.testsupport.NetworkNamespaces;
import io.github.dblock.testsupport.OwnPostgreSql;
import io.github.dblock.testsupport.OwnServer;

class PostgreSqlFaultCampaignTests extends FaultCampaignContractTests {

	@Override
	protected OwnServer startServer(NetworkNamespaces namespaces) throws Exception {
		OwnPostgreSql server = OwnPostgreSql.startListeningOn(namespaces.hostAddresses(), "10.231.0.0/16");
		limitIdleTransactions(server);
		return server;
	}

	/** A transaction whose client was cut off ends after 5 s idle, with its row locks. */
	static void limitIdleTransactions(OwnServer server) {
		try (Connection connection = DriverManager.getConnection(server.url(), server.user(), "");
				Statement statement = connection.createStatement()) {
			statement.execute("ALTER SYSTEM SET idle_in_transaction_session_timeout = '5s'");
			statement.execute("SELECT pg_reload_conf()");
		}
		catch (java.sql.SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	protected String nodeUrl(OwnServer server, NetworkNamespaces namespaces, int n) {
		String url = server.url().replace("127.0.0.1", namespaces.hostAddress(n));
		return url + (url.contains("?") ? "&" : "?") + "connectTimeout=1&socketTimeout=10";
	}

	@Override
	protected List<String> stallTrigger(String table) {
		List<String> statements = new ArrayList<>();
		statements.add("CREATE FUNCTION db_lock_test_campaign_stall() RETURNS trigger AS $$ BEGIN"
				+ " PERFORM pg_sleep(stall_seconds) FROM db_lock_test_campaign_stall WHERE id = 1 AND stall_seconds > 0;"
				+ " RETURN NEW; END $$ LANGUAGE plpgsql");
		for (String stalled : List.of(table, table + "_rw", table + "_fair_queue")) {
			statements.add("CREATE TRIGGER " + stalled + "_stall BEFORE INSERT OR UPDATE ON " + stalled
					+ " FOR EACH ROW EXECUTE FUNCTION db_lock_test_campaign_stall()");
		}
		return statements;
	}

}
