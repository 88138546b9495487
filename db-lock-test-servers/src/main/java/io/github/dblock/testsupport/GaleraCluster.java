package io.github.dblock.testsupport;

import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * A MariaDB Galera cluster of the test's own on loopback (Debian's {@code galera-4}): every
 * member on ports of its own, state transfer by {@code rsync}. Started member by member,
 * each waited for until the cluster counts it and it is synced (bounded); a member killed
 * with {@code kill -9} rejoins when started again. Skips the test where Galera is not
 * installed. As an {@link OwnServer} its URL spreads connections over every member, and
 * killing it kills its last member, which its restart brings back into the cluster.
 */
public final class GaleraCluster implements OwnServer {

	private static final Duration SYNC_TIMEOUT = Duration.ofSeconds(90);

	private final List<OwnMariaDb> members = new ArrayList<>();

	private GaleraCluster() {
	}

	/**
	 * Starts a cluster.
	 * @param size how many members
	 * @return the running cluster, every member synced
	 * @throws Exception if a member does not start and sync in time
	 */
	public static GaleraCluster start(int size) throws Exception {
		return start(size, List.of());
	}

	/**
	 * Starts a cluster whose members also listen on further addresses of this machine (such
	 * as the host ends of a test's network namespaces), with further server options, and lets
	 * {@code root} connect from the hosts {@code clientHosts} names (a MariaDB host pattern
	 * such as {@code 10.231.%}) with an empty password.
	 * @param size how many members
	 * @param addresses the further addresses to listen on, present on this machine
	 * @param clientHosts the host pattern the test's clients connect from
	 * @param options further server options of every member
	 * @return the running cluster, every member synced
	 * @throws Exception if a member does not start and sync in time
	 */
	public static GaleraCluster startListeningOn(int size, List<String> addresses, String clientHosts,
			String... options) throws Exception {
		List<String> all = new ArrayList<>(List.of(options));
		all.add("--bind-address=127.0.0.1," + String.join(",", addresses));
		GaleraCluster cluster = start(size, all);
		try (Connection connection = cluster.members.get(0).connect()) {
			OwnMariaDb.admitRoot(connection, clientHosts);
		}
		catch (SQLException ex) {
			cluster.close();
			throw ex;
		}
		return cluster;
	}

	private static GaleraCluster start(int size, List<String> options) throws Exception {
		List<int[]> ports = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			ports.add(new int[] { freePort(), freePort(), freePort() });
		}
		String address = ports.stream().map((member) -> "127.0.0.1:" + member[0]).collect(Collectors.joining(","));
		GaleraCluster cluster = new GaleraCluster();
		try {
			for (int i = 0; i < size; i++) {
				int[] member = ports.get(i);
				List<String> memberOptions = new ArrayList<>(List.of("--wsrep-cluster-address=gcomm://" + address,
						"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + member[0] + ";ist.recv_addr=127.0.0.1:"
								+ member[1],
						"--wsrep-sst-receive-address=127.0.0.1:" + member[2]));
				memberOptions.addAll(options);
				cluster.members.add(OwnMariaDb.startGaleraMember(memberOptions, i == 0));
				cluster.awaitSynced(i + 1);
			}
		}
		catch (Exception | Error ex) {
			// what the donor said of the state transfer, before its directory goes
			String donor = cluster.members.isEmpty() ? "" : cluster.members.get(0).errorLogTail(200);
			cluster.close();
			throw new IllegalStateException("The Galera cluster did not start; its first member's log ends with:\n"
					+ donor, ex);
		}
		return cluster;
	}

	/**
	 * A member.
	 * @param index its index, from 0
	 * @return the member
	 */
	public OwnMariaDb member(int index) {
		return this.members.get(index);
	}

	/**
	 * The driver settings that bound its failover inside a statement: two tries of up to
	 * 500 ms each (db-lock warns at start-up of a URL without such limits).
	 */
	public static final String DRIVER_FAILOVER = "retriesAllDown=2&connectTimeout=500";

	/** The longest {@link #DRIVER_FAILOVER} lets the driver fail over inside a statement. */
	public static final Duration DRIVER_FAILOVER_TIME = Duration.ofMillis(2 * (500 + 250));

	/**
	 * A JDBC URL that spreads connections over every member and fails over to the others
	 * when one dies ({@code jdbc:mariadb:loadbalance:}), whose sessions wait for causality
	 * ({@code wsrep_sync_wait=15}, which db-lock's start-up requires) and whose driver fails
	 * over within {@link #DRIVER_FAILOVER}.
	 * @return the URL of the database {@code test}
	 */
	@Override
	public String url() {
		return "jdbc:mariadb:loadbalance://"
				+ this.members.stream().map((member) -> "127.0.0.1:" + member.port()).collect(Collectors.joining(","))
				+ "/test?sessionVariables=wsrep_sync_wait=15&" + DRIVER_FAILOVER;
	}

	@Override
	public String user() {
		return "root";
	}

	@Override
	public String generatedKey() {
		return "BIGINT AUTO_INCREMENT";
	}

	/** Kills the last member ({@code kill -9}); the others carry on as the cluster. */
	@Override
	public void kill() throws Exception {
		this.members.get(this.members.size() - 1).kill();
	}

	/** Starts the killed member again and waits until it has rejoined and synced. */
	@Override
	public void restart() throws Exception {
		rejoin(this.members.size() - 1);
	}

	/**
	 * Starts a killed member again and waits until it has rejoined and synced.
	 * @param index its index
	 * @throws Exception if it does not within the limit
	 */
	public void rejoin(int index) throws Exception {
		this.members.get(index).restart();
		awaitSynced(this.members.size());
	}

	/** Waits until every live member counts {@code size} members and says it is synced. */
	private void awaitSynced(int size) throws Exception {
		long deadline = System.nanoTime() + SYNC_TIMEOUT.toNanos();
		for (OwnMariaDb member : this.members.subList(0, size)) {
			while (!synced(member, size)) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Galera member on port " + member.port() + " did not sync with "
							+ size + " members within " + SYNC_TIMEOUT);
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
			}
		}
	}

	private static boolean synced(OwnMariaDb member, int size) {
		try (Connection connection = member.connect(); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
						+ "WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'), (SELECT VARIABLE_VALUE FROM "
						+ "information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT')")) {
			rs.next();
			return String.valueOf(size).equals(rs.getString(1)) && "Synced".equals(rs.getString(2));
		}
		catch (SQLException ex) {
			return false;
		}
	}

	/**
	 * The certification conflicts the members counted since they started: transactions
	 * refused at commit ({@code wsrep_local_cert_failures}) and local transactions aborted by
	 * a replicated one ({@code wsrep_local_bf_aborts}). A member started again counts from 0.
	 * @return the sum over the members
	 */
	public long certificationConflicts() {
		long conflicts = 0;
		for (OwnMariaDb member : this.members) {
			try (Connection connection = member.connect(); Statement statement = connection.createStatement();
					ResultSet rs = statement.executeQuery("SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS "
							+ "WHERE VARIABLE_NAME IN ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')")) {
				rs.next();
				conflicts += rs.getLong(1);
			}
			catch (SQLException ex) {
				throw new IllegalStateException("Galera member on port " + member.port() + " did not answer", ex);
			}
		}
		return conflicts;
	}

	@Override
	public void close() throws Exception {
		Exception failure = null;
		for (OwnMariaDb member : this.members) {
			try {
				member.close();
			}
			catch (Exception ex) {
				failure = ex;
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
