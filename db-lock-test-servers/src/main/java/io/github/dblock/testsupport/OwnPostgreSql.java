package io.github.dblock.testsupport;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;

/**
 * A PostgreSQL server of a test's own, from the Debian binaries: its own port and data
 * directory (under {@code /tmp}, owned by the {@code postgres} user, as PostgreSQL refuses
 * to run as root), started as a child of this JVM through {@code runuser} so that a killed
 * server is reaped. Killing it kills the postmaster and its backends with {@code SIGKILL}, as
 * a crash of the machine would; starting it again runs crash recovery. Skips the test when
 * the binaries are not installed; {@code .ci/run} checks that the tests using it ran.
 */
public final class OwnPostgreSql implements OwnServer {

	private static final Path BIN = Path.of("/usr/lib/postgresql/15/bin");

	private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

	private final Path directory;

	private final int port;

	private Process process;

	/** The addresses it listens on. */
	private String listenAddresses = "127.0.0.1";

	private OwnPostgreSql(Path directory, int port) {
		this.directory = directory;
		this.port = port;
	}

	/**
	 * Creates a cluster and starts it on a free port, with a database {@code test}.
	 * @return the running server
	 * @throws Exception if it cannot be started within a minute
	 */
	public static OwnPostgreSql start() throws Exception {
		return start(List.of(), null);
	}

	/**
	 * Starts a server as {@link #start()} does that also listens on further addresses of this
	 * machine (such as the host ends of a test's network namespaces) and trusts connections
	 * from the network {@code clientNetwork} (CIDR, such as {@code 10.231.0.0/16}); the
	 * addresses stay its own on a restart.
	 * @param addresses the further addresses to listen on, present on this machine
	 * @param clientNetwork the network the test's clients connect from
	 * @return the running server
	 * @throws Exception if it cannot be started within a minute
	 */
	public static OwnPostgreSql startListeningOn(List<String> addresses, String clientNetwork) throws Exception {
		return start(addresses, clientNetwork);
	}

	private static OwnPostgreSql start(List<String> addresses, String clientNetwork) throws Exception {
		Assumptions.assumeTrue(Files.isExecutable(BIN.resolve("postgres")) && Files.isExecutable(Path.of("/usr/sbin/runuser")),
				"PostgreSQL binaries or runuser not installed");
		Path directory = Files.createTempDirectory("own-postgresql-");
		run(List.of("chown", "postgres", directory.toString()), directory);
		OwnPostgreSql server = new OwnPostgreSql(directory, freePort());
		run(List.of("runuser", "-u", "postgres", "--", BIN.resolve("initdb").toString(), "-D",
				server.dataDirectory().toString(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"), directory);
		if (!addresses.isEmpty()) {
			server.listenAddresses = "127.0.0.1," + String.join(",", addresses);
			Files.writeString(server.dataDirectory().resolve("pg_hba.conf"),
					"host all all " + clientNetwork + " trust\n", java.nio.file.StandardOpenOption.APPEND);
		}
		server.startServer();
		try (Connection connection = server.connect("postgres"); Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE test");
		}
		return server;
	}

	/**
	 * Starts a streaming standby of this server on a free port (a base backup taken with
	 * {@code pg_basebackup -R}), and waits until it streams. A synchronous one is named in
	 * this server's {@code synchronous_standby_names}, so that a commit here returns only
	 * once the standby has it.
	 * @param synchronous whether commits wait for the standby
	 * @return the running standby, read-only until {@link #promote()}
	 * @throws Exception if it cannot be started within a minute
	 */
	public OwnPostgreSql startStandby(boolean synchronous) throws Exception {
		Path directory = Files.createTempDirectory("own-postgresql-standby-");
		run(List.of("chown", "postgres", directory.toString()), directory);
		OwnPostgreSql standby = new OwnPostgreSql(directory, freePort());
		follow(standby, synchronous);
		return standby;
	}

	/**
	 * Makes a server that was killed a synchronous standby of this one, on its own port: its
	 * data directory emptied, a base backup of this server taken into it, started, waited for
	 * until it streams. What a failed primary becomes once its standby has been promoted.
	 * @param killed the server, not running
	 * @throws Exception if it does not stream within a minute
	 */
	public void rebuildAsStandby(OwnPostgreSql killed) throws Exception {
		try (Stream<Path> files = Files.walk(killed.dataDirectory())) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
		follow(killed, true);
	}

	/** Takes a base backup of this server into the standby's directory, starts it, waits until it streams. */
	private void follow(OwnPostgreSql standby, boolean synchronous) throws Exception {
		standby.listenAddresses = this.listenAddresses;
		run(List.of("runuser", "-u", "postgres", "--", BIN.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p",
				String.valueOf(this.port), "-U", "postgres", "-D", standby.dataDirectory().toString(), "-R", "-X",
				"stream", "-c", "fast", "--no-sync"), standby.directory);
		standby.startServer();
		try (Connection connection = connect("postgres"); Statement statement = connection.createStatement()) {
			if (synchronous) {
				statement.execute("ALTER SYSTEM SET synchronous_standby_names = '*'");
				statement.execute("SELECT pg_reload_conf()");
			}
			String state = synchronous ? "sync" : "async";
			long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
			while (true) {
				try (ResultSet rs = statement.executeQuery(
						"SELECT COUNT(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = '" + state + "'")) {
					rs.next();
					if (rs.getInt(1) == 1) {
						break;
					}
				}
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("the standby on port " + standby.port + " did not stream " + state);
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
			}
		}
	}

	/**
	 * The server's port.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Stops a standby's streaming from its primary (its {@code primary_conninfo} emptied), so
	 * that what the primary commits from now on is not on it.
	 * @throws Exception if the standby cannot be reached
	 */
	public void stopStreaming() throws Exception {
		try (Connection connection = connect("postgres"); Statement statement = connection.createStatement()) {
			statement.execute("ALTER SYSTEM SET primary_conninfo = ''");
			statement.execute("SELECT pg_reload_conf()");
			long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
			while (true) {
				try (ResultSet rs = statement.executeQuery("SELECT COUNT(*) FROM pg_stat_wal_receiver")) {
					rs.next();
					if (rs.getInt(1) == 0) {
						return;
					}
				}
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("the standby on port " + this.port + " kept streaming");
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
			}
		}
	}

	/**
	 * Promotes a standby to a primary (failover) and waits until it accepts writes.
	 * @throws Exception if it does not within a minute
	 */
	public void promote() throws Exception {
		try (Connection connection = connect("postgres"); Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT pg_promote(true, 60)")) {
			rs.next();
			if (!rs.getBoolean(1)) {
				throw new IllegalStateException("the standby on port " + this.port + " was not promoted within a minute");
			}
		}
	}

	@Override
	public String url() {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/test";
	}

	@Override
	public String user() {
		return "postgres";
	}

	@Override
	public String generatedKey() {
		return "BIGSERIAL";
	}

	@Override
	public void kill() throws Exception {
		long postmaster = Long.parseLong(Files.readAllLines(dataDirectory().resolve("postmaster.pid")).get(0).strip());
		// SIGKILL to the postmaster and its backends, as root may; one that already ended is skipped
		List<ProcessHandle> processes = new ArrayList<>();
		ProcessHandle.of(postmaster).ifPresent((handle) -> {
			processes.add(handle);
			handle.children().forEach(processes::add);
		});
		processes.forEach(ProcessHandle::destroyForcibly);
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("PostgreSQL on port " + this.port + " did not die");
		}
	}

	@Override
	public void restart() throws Exception {
		startServer();
	}

	@Override
	public void close() throws Exception {
		if (this.process != null && this.process.isAlive()) {
			kill();
		}
		try (Stream<Path> files = Files.walk(this.directory)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
	}

	private Path dataDirectory() {
		return this.directory.resolve("data");
	}

	private void startServer() throws Exception {
		this.process = new ProcessBuilder("runuser", "-u", "postgres", "--", BIN.resolve("postgres").toString(), "-D",
				dataDirectory().toString(), "-p", String.valueOf(this.port), "-k", this.directory.toString(), "-c",
				"listen_addresses=" + this.listenAddresses, "-c", "max_connections=200")
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(this.directory.resolve("server.log").toFile()))
			.start();
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (true) {
			try (Connection connection = connect("postgres")) {
				return;
			}
			catch (SQLException ex) {
				if (!this.process.isAlive() || System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("PostgreSQL on port " + this.port + " did not start: "
							+ Files.readString(this.directory.resolve("server.log")), ex);
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
			}
		}
	}

	private Connection connect(String database) throws SQLException {
		return DriverManager.getConnection(
				"jdbc:postgresql://127.0.0.1:" + this.port + "/" + database + "?connectTimeout=1", "postgres", "");
	}

	private static void run(List<String> command, Path directory) throws IOException, InterruptedException {
		Path log = directory.resolve("command.log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.start();
		if (!process.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || process.exitValue() != 0) {
			process.destroyForcibly();
			throw new IllegalStateException(command.get(0) + " failed: " + Files.readString(log));
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
