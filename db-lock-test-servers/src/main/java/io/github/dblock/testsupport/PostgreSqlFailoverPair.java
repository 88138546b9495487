package io.github.dblock.testsupport;

import java.util.List;
import java.util.function.Consumer;

/**
 * A PostgreSQL primary of the test's own with a synchronous streaming standby (a commit
 * returns only once the standby has it). Killing it kills the primary ({@code kill -9});
 * restarting it fails over: the standby is promoted and the killed server becomes its
 * synchronous standby, on its own port, from a new base backup. Its URL names both servers,
 * for the primary ({@code targetServerType=primary}), so that clients follow the failover.
 */
public final class PostgreSqlFailoverPair implements OwnServer {

	private final OwnPostgreSql first;

	private final OwnPostgreSql second;

	private OwnPostgreSql primary;

	private OwnPostgreSql standby;

	private PostgreSqlFailoverPair(OwnPostgreSql primary, OwnPostgreSql standby) {
		this.first = primary;
		this.second = standby;
		this.primary = primary;
		this.standby = standby;
	}

	/**
	 * Starts a primary as {@link OwnPostgreSql#startListeningOn(List, String)} does, lets the
	 * test set it up, and starts its synchronous standby from a base backup of it (which
	 * carries the primary's {@code ALTER SYSTEM} settings).
	 * @param addresses the further addresses to listen on, present on this machine
	 * @param clientNetwork the network the test's clients connect from
	 * @param setUp what the test does on the primary first
	 * @return the running pair
	 * @throws Exception if a server cannot be started within a minute
	 */
	public static PostgreSqlFailoverPair startListeningOn(List<String> addresses, String clientNetwork,
			Consumer<OwnPostgreSql> setUp) throws Exception {
		OwnPostgreSql primary = OwnPostgreSql.startListeningOn(addresses, clientNetwork);
		try {
			setUp.accept(primary);
			return new PostgreSqlFailoverPair(primary, primary.startStandby(true));
		}
		catch (Exception | Error ex) {
			primary.close();
			throw ex;
		}
	}

	@Override
	public String url() {
		return "jdbc:postgresql://127.0.0.1:" + this.first.port() + ",127.0.0.1:" + this.second.port()
				+ "/test?targetServerType=primary";
	}

	@Override
	public String user() {
		return "postgres";
	}

	@Override
	public String generatedKey() {
		return "BIGSERIAL";
	}

	/** Kills the primary ({@code kill -9}): no shutdown, its standby has every commit. */
	@Override
	public synchronized void kill() throws Exception {
		this.primary.kill();
	}

	/** Fails over: promotes the standby, then makes the killed primary its synchronous standby. */
	@Override
	public synchronized void restart() throws Exception {
		OwnPostgreSql killed = this.primary;
		this.standby.promote();
		this.primary = this.standby;
		this.standby = killed;
		this.primary.rebuildAsStandby(killed);
	}

	@Override
	public void close() throws Exception {
		try {
			this.second.close();
		}
		finally {
			this.first.close();
		}
	}

}
