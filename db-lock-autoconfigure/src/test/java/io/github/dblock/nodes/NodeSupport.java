package io.github.dblock.nodes;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.IntFunction;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the node processes and their tests share: a node's pool and engine (the defaults
 * an application gets), starting nodes as separate JVMs with the test class path, reading
 * the {@code key=value} lines they print, and the database's clock.
 */
public final class NodeSupport {

	/** The longest a node may run before its test destroys it and fails. */
	static final Duration NODE_TIMEOUT = Duration.ofMinutes(3);

	/** The longest a node polls a signal row for the other node's move. */
	static final Duration SIGNAL_TIMEOUT = Duration.ofMinutes(1);

	/**
	 * The JVM options of a node under libfaketime: its C2 compiler and G1 threads read the
	 * clock so often, each read through libfaketime, that a node took 50 s to start with
	 * them, 12 s without.
	 */
	static final String FAKETIME_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1";

	private static final List<String> LIBFAKETIME = List.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
			"/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1");

	private NodeSupport() {
	}

	/** Debian's libfaketime (package {@code faketime}), or {@code null} where it is not installed. */
	static String libfaketime() {
		return LIBFAKETIME.stream().filter((path) -> Files.exists(Path.of(path))).findFirst().orElse(null);
	}

	/** A started node process and what it prints, read as it comes. */
	public record Node(Process process, CompletableFuture<String> output) {
	}

	/** A node's pool. */
	public static HikariDataSource dataSource(String url, String user, String password, int poolSize) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword(password);
		config.setMaximumPoolSize(poolSize);
		return new HikariDataSource(config);
	}

	/** A node's engine with db-lock's default back-off and local turn. */
	static LockEngine engine(DataSource dataSource) {
		return engine(repository(dataSource));
	}

	/** A node's repository on the test table. */
	static JdbcLockRepository repository(DataSource dataSource) {
		return new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE));
	}

	/** A node's engine over a repository, with db-lock's default back-off and local turn. */
	static LockEngine engine(LockRepository repository) {
		return new LockEngine(repository, LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
	}

	/** Starts a node: {@code main} with the database's settings, then {@code args}. */
	public static Node start(Class<?> main, TestDatabase.Connection database, Object... args) throws IOException {
		return start(List.of(), main, database, Map.of(), (line) -> {
		}, args);
	}

	/**
	 * Starts a node with variables added to its environment (such as {@code LD_PRELOAD}):
	 * {@code main} with the database's settings, then {@code args}.
	 */
	public static Node start(Class<?> main, TestDatabase.Connection database, Map<String, String> environment,
			Object... args) throws IOException {
		return start(List.of(), main, database, environment, (line) -> {
		}, args);
	}

	/**
	 * Starts a node as {@link #start(Class, TestDatabase.Connection, Object...)} does, and
	 * hands each line it prints to {@code lines} as it comes, on the reading thread; its
	 * output completes with everything it printed once the process has ended (its end of
	 * the pipe closed), killed or not.
	 */
	public static Node start(Class<?> main, TestDatabase.Connection database, Consumer<String> lines, Object... args)
			throws IOException {
		return start(List.of(), main, database, Map.of(), lines, args);
	}

	/**
	 * Starts a node as {@link #start(Class, TestDatabase.Connection, Map, Object...)} does,
	 * through a launcher that runs the JVM (such as {@code ip netns exec <namespace>}, which
	 * executes it in place: the process is the JVM's).
	 */
	public static Node start(List<String> launcher, Class<?> main, TestDatabase.Connection database,
			Map<String, String> environment, Object... args) throws IOException {
		return start(launcher, main, database, environment, (line) -> {
		}, args);
	}

	private static Node start(List<String> launcher, Class<?> main, TestDatabase.Connection database,
			Map<String, String> environment, Consumer<String> lines, Object... args) throws IOException {
		List<String> command = new ArrayList<>(launcher);
		command.addAll(command(main, database, args));
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().putAll(environment);
		Process process = builder.start();
		// read as it comes, so that a node never stalls on a full pipe and a hung one can be ended
		CompletableFuture<String> output = new CompletableFuture<>();
		Thread reader = new Thread(() -> {
			StringBuilder printed = new StringBuilder();
			try (BufferedReader in = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				String line;
				while ((line = in.readLine()) != null) {
					printed.append(line).append('\n');
					lines.accept(line);
				}
				output.complete(printed.toString());
			}
			catch (IOException | RuntimeException ex) {
				output.completeExceptionally(ex);
			}
		}, "output of " + main.getSimpleName());
		reader.setDaemon(true);
		reader.start();
		return new Node(process, output);
	}

	private static List<String> command(Class<?> main, TestDatabase.Connection database, Object... args) {
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-cp", System.getProperty("java.class.path"), main.getName(), database.url(), database.user(),
				database.password()));
		for (Object arg : args) {
			command.add(String.valueOf(arg));
		}
		return command;
	}

	/**
	 * Waits for a node to end (at most {@link #NODE_TIMEOUT}, else it is destroyed and the
	 * test fails), checks it succeeded, and returns what it printed.
	 */
	public static String finish(Node node) throws Exception {
		Process process = node.process();
		if (!process.waitFor(NODE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
			process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			throw new AssertionError("node did not end within " + NODE_TIMEOUT + ": " + printed(node));
		}
		String output = node.output().get(10, TimeUnit.SECONDS);
		assertThat(process.exitValue()).as(output).isZero();
		return output;
	}

	private static String printed(Node node) {
		try {
			return node.output().get(10, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			return "(output not read: " + ex + ")";
		}
	}

	/**
	 * Starts {@code count} nodes, waits for them all, and returns the values each printed;
	 * the nodes still running when one fails are destroyed.
	 */
	public static List<Map<String, String>> run(int count, Class<?> main, TestDatabase.Connection database,
			IntFunction<Object[]> args) throws Exception {
		List<Node> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < count; i++) {
				nodes.add(start(main, database, args.apply(i)));
			}
			List<Map<String, String>> values = new ArrayList<>();
			for (Node node : nodes) {
				values.add(values(finish(node)));
			}
			return values;
		}
		finally {
			for (Node node : nodes) {
				node.process().destroyForcibly();
			}
		}
	}

	/** The {@code key=value} lines of a node's output. */
	public static Map<String, String> values(String output) {
		Map<String, String> values = new HashMap<>();
		for (String line : output.split("\n")) {
			int equals = line.indexOf('=');
			if (equals > 0 && !line.contains(" ")) {
				values.put(line.substring(0, equals), line.substring(equals + 1).strip());
			}
		}
		return values;
	}

	/** The database's now, in microseconds of its clock. */
	static long databaseMicros(JdbcTemplate jdbc, SqlDialect dialect) {
		Timestamp now = jdbc.queryForObject("SELECT " + dialect.now(), Timestamp.class);
		return now.getTime() / 1000 * 1_000_000 + now.getNanos() / 1000;
	}

	/**
	 * Polls a signal row until {@code query} returns {@code value}, at most
	 * {@link #SIGNAL_TIMEOUT}: the other node's move.
	 */
	static void awaitSignal(JdbcTemplate jdbc, String query, int value) {
		long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
		while (jdbc.queryForObject(query, Integer.class) != value) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("no " + value + " from '" + query + "' within " + SIGNAL_TIMEOUT);
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/** Parks until a wall-clock start time shared by the nodes. */
	static void awaitStart(long startEpochMillis) {
		long wait;
		while ((wait = startEpochMillis - System.currentTimeMillis()) > 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(wait));
		}
	}

}
