package io.github.dblock.testsupport;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
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
 * A MariaDB server of a test's own: its own port and data directory (under
 * {@code target/}), started from the Debian binaries, so that a test can kill it with
 * {@code kill -9} and start it again without touching the shared server. Skips the test
 * when the binaries are not installed (a GitHub runner); {@code .ci/run} checks that the
 * tests using it ran.
 */
public final class OwnMariaDb implements OwnServer {

	private static final Path SERVER = Path.of("/usr/sbin/mariadbd");

	private static final Path INSTALL = Path.of("/usr/bin/mariadb-install-db");

	private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

	private final Path directory;

	private final int port;

	private static final Path GALERA = Path.of("/usr/lib/galera/libgalera_smm.so");

	private final List<String> options;

	private Process process;

	/** Whether it is a member of a {@link GaleraCluster}, which rejoins by state transfer. */
	private boolean galeraMember;

	private OwnMariaDb(Path directory, int port, List<String> options) {
		this.directory = directory;
		this.port = port;
		this.options = options;
	}

	/**
	 * Creates a data directory and starts a server on a free port, with a database
	 * {@code test}.
	 * @return the running server
	 * @throws Exception if it cannot be started within a minute
	 */
	public static OwnMariaDb start() throws Exception {
		return start(List.of());
	}

	/**
	 * Creates a data directory and starts a server on a free port with server options of
	 * the test's (such as {@code --innodb-rollback-on-timeout=ON}, which cannot be set at
	 * run time), with a database {@code test}.
	 * @param options the server's options
	 * @return the running server
	 * @throws Exception if it cannot be started within a minute
	 */
	public static OwnMariaDb startWith(String... options) throws Exception {
		return start(List.of(options));
	}

	/**
	 * Starts a server as {@link #start()} does that also listens on further addresses of this
	 * machine (such as the host ends of a test's network namespaces), and lets {@code root}
	 * connect from the hosts {@code clientHosts} names (a MariaDB host pattern such as
	 * {@code 10.231.%}), with an empty password; the addresses stay its own on a restart.
	 * @param addresses the further addresses to listen on, present on this machine
	 * @param clientHosts the host pattern the test's clients connect from
	 * @param options further server options of the test's
	 * @return the running server
	 * @throws Exception if it cannot be started within a minute
	 */
	public static OwnMariaDb startListeningOn(List<String> addresses, String clientHosts, String... options)
			throws Exception {
		List<String> all = new ArrayList<>(List.of(options));
		all.add("--bind-address=127.0.0.1," + String.join(",", addresses));
		OwnMariaDb server = start(all);
		try (Connection connection = server.connect()) {
			admitRoot(connection, clientHosts);
		}
		return server;
	}

	/** Lets {@code root} connect from the hosts a pattern names, with an empty password. */
	static void admitRoot(Connection connection, String clientHosts) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute("CREATE USER 'root'@'" + clientHosts + "' IDENTIFIED BY ''");
			statement.execute("GRANT ALL PRIVILEGES ON *.* TO 'root'@'" + clientHosts + "' WITH GRANT OPTION");
		}
	}

	/**
	 * Starts a server that is the one node of a Galera cluster it bootstraps
	 * ({@code wsrep_on=ON}), with a database {@code test}. Skips the test where Galera
	 * ({@code galera-4}) is not installed.
	 * @return the running server
	 * @throws Exception if it cannot be started within a minute
	 */
	public static OwnMariaDb startGaleraNode() throws Exception {
		Assumptions.assumeTrue(Files.isReadable(GALERA), "Galera not installed: " + GALERA);
		int replicationPort = freePort();
		return start(List.of("--wsrep-on=ON", "--wsrep-provider=" + GALERA, "--wsrep-cluster-address=gcomm://",
				"--binlog-format=ROW", "--innodb-autoinc-lock-mode=2", "--wsrep-node-address=127.0.0.1",
				"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + replicationPort + ";base_port="
						+ freePort()));
	}

	/**
	 * Starts a member of a Galera cluster of the test's own (see {@link GaleraCluster}): a
	 * new data directory, the cluster's options; the first member bootstraps the cluster
	 * ({@code --wsrep-new-cluster}, on its first start only) and creates the database
	 * {@code test}, the others join it and receive its data by state transfer.
	 * @param options the member's Galera options
	 * @param bootstrap whether it is the first member
	 * @return the running member, once it accepts connections
	 * @throws Exception if it cannot be started within a minute
	 */
	static OwnMariaDb startGaleraMember(List<String> options, boolean bootstrap) throws Exception {
		Assumptions.assumeTrue(Files.isReadable(GALERA), "Galera not installed: " + GALERA);
		Assumptions.assumeTrue(Files.isExecutable(SERVER) && Files.isExecutable(INSTALL),
				"MariaDB binaries not installed: " + SERVER + ", " + INSTALL);
		Path directory = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "own-galera-");
		List<String> all = new ArrayList<>(List.of("--wsrep-on=ON", "--wsrep-provider=" + GALERA, "--binlog-format=ROW",
				"--innodb-autoinc-lock-mode=2", "--wsrep-node-address=127.0.0.1", "--wsrep-sst-method=rsync"));
		all.addAll(options);
		OwnMariaDb server = new OwnMariaDb(directory, freePort(), all);
		server.galeraMember = true;
		if (bootstrap) {
			server.run(List.of(INSTALL.toString(), "--no-defaults", "--datadir=" + server.dataDirectory(),
					"--auth-root-authentication-method=normal", "--skip-test-db", "--user=root"));
		}
		else {
			server.emptyDataDirectory();
		}
		server.startServer(bootstrap ? List.of("--wsrep-new-cluster") : List.of());
		server.awaitWsrepReady();
		if (bootstrap) {
			try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
				statement.execute("CREATE DATABASE test");
			}
		}
		return server;
	}

	/**
	 * The server's port.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	private static OwnMariaDb start(List<String> options) throws Exception {
		Assumptions.assumeTrue(Files.isExecutable(SERVER) && Files.isExecutable(INSTALL),
				"MariaDB binaries not installed: " + SERVER + ", " + INSTALL);
		Path directory = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "own-mariadb-");
		OwnMariaDb server = new OwnMariaDb(directory, freePort(), options);
		server.run(List.of(INSTALL.toString(), "--no-defaults", "--datadir=" + server.dataDirectory(),
				"--auth-root-authentication-method=normal", "--skip-test-db", "--user=root"));
		server.startServer();
		if (options.contains("--wsrep-on=ON")) {
			server.awaitWsrepReady();
		}
		try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE test");
		}
		return server;
	}

	@Override
	public String user() {
		return "root";
	}

	@Override
	public String generatedKey() {
		return "BIGINT AUTO_INCREMENT";
	}

	@Override
	public String url() {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/test";
	}

	@Override
	public void kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("MariaDB on port " + this.port + " did not die");
		}
	}

	@Override
	public void restart() throws Exception {
		if (this.galeraMember) {
			// it joins again by a full state transfer, into an empty directory
			emptyDataDirectory();
		}
		startServer();
	}

	/**
	 * An empty data directory that a state transfer may fill: rsync's daemon, started by
	 * the joining member as root, writes as {@code nobody}.
	 */
	private void emptyDataDirectory() throws IOException {
		Path data = dataDirectory();
		if (Files.exists(data)) {
			try (Stream<Path> files = Files.walk(data)) {
				files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
			}
		}
		Files.createDirectories(data);
		Files.setPosixFilePermissions(this.directory, PosixFilePermissions.fromString("rwxr-xr-x"));
		Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxrwxrwx"));
		// its own, so that it may set the directory's permissions to the donor's
		Files.setOwner(data, data.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
	}

	@Override
	public void close() throws Exception {
		if (this.process != null) {
			this.process.destroyForcibly();
			this.process.waitFor(30, TimeUnit.SECONDS);
		}
		try (Stream<Path> files = Files.walk(this.directory)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
	}

	/**
	 * Waits until a Galera member is ready for applications ({@code wsrep_ready=ON}): it
	 * accepts connections before, and answers their statements with error 1047.
	 */
	private void awaitWsrepReady() throws Exception {
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (true) {
			try (Connection connection = connect(); Statement statement = connection.createStatement();
					java.sql.ResultSet rs = statement.executeQuery("SHOW STATUS LIKE 'wsrep_ready'")) {
				if (rs.next() && "ON".equalsIgnoreCase(rs.getString(2))) {
					return;
				}
			}
			catch (SQLException ex) {
				// not yet
			}
			if (!this.process.isAlive() || System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("Galera member on port " + this.port + " was not ready: "
						+ errorLogTail(60));
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
		}
	}

	/**
	 * The last lines of the server's error log, for a failure's message.
	 * @param lines how many
	 * @return the lines, or why they could not be read
	 */
	String errorLogTail(int lines) {
		try {
			List<String> all = Files.readAllLines(this.directory.resolve("error.log"));
			return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
		}
		catch (IOException ex) {
			return "(no error log: " + ex + ")";
		}
	}

	private Path dataDirectory() {
		return this.directory.resolve("data");
	}

	private void startServer() throws Exception {
		startServer(List.of());
	}

	private void startServer(List<String> firstStartOptions) throws Exception {
		List<String> command = new ArrayList<>(List.of(SERVER.toString(), "--no-defaults",
				"--datadir=" + dataDirectory(), "--port=" + this.port, "--bind-address=127.0.0.1",
				"--socket=" + this.directory.resolve("socket"), "--pid-file=" + this.directory.resolve("pid"),
				"--user=root", "--innodb-buffer-pool-size=32M", "--max-connections=200", "--skip-log-bin",
				"--log-error=" + this.directory.resolve("error.log")));
		command.addAll(this.options);
		command.addAll(firstStartOptions);
		this.process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(this.directory.resolve("server.out").toFile())
			.start();
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (true) {
			try (Connection connection = connect()) {
				return;
			}
			catch (SQLException ex) {
				if (!this.process.isAlive() || System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("MariaDB on port " + this.port + " did not start: "
							+ Files.readString(this.directory.resolve("error.log")), ex);
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
			}
		}
	}

	Connection connect() throws SQLException {
		return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + this.port + "/?connectTimeout=1000", "root",
				"");
	}

	private void run(List<String> command) throws IOException, InterruptedException {
		Process install = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(this.directory.resolve("install.log").toFile())
			.start();
		if (!install.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || install.exitValue() != 0) {
			install.destroyForcibly();
			throw new IllegalStateException(
					"mariadb-install-db failed: " + Files.readString(this.directory.resolve("install.log")));
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
