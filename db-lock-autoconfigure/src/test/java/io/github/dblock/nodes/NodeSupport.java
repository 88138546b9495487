package io.github.dblock.nodes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.core.Backoff;
import io.github.dblock.core.LockEngine;
import io.github.dblock.core.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.SqlDialect;
import io.github.dblock.jdbc.SqlDialects;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the node processes and their tests share: a node's pool and engine (the defaults
 * an application gets), starting nodes as separate JVMs with the test class path, reading
 * the {@code key=value} lines they print, and the database's clock.
 */
final class NodeSupport {

	private NodeSupport() {
	}

	/** A node's pool. */
	static HikariDataSource dataSource(String url, String user, String password, int poolSize) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword(password);
		config.setMaximumPoolSize(poolSize);
		return new HikariDataSource(config);
	}

	/** A node's engine with db-lock's default back-off and local turn. */
	static LockEngine engine(DataSource dataSource) {
		return new LockEngine(new JdbcLockRepository(dataSource, SqlDialects.detect(dataSource, TestDatabase.TABLE)),
				LockEngineSettings.of(new Backoff(Duration.ofMillis(5), Duration.ofMillis(100))));
	}

	/** Starts a node: {@code main} with the database's settings, then {@code args}. */
	static Process start(Class<?> main, TestDatabase.Connection database, Object... args) throws IOException {
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-cp", System.getProperty("java.class.path"), main.getName(), database.url(), database.user(),
				database.password()));
		for (Object arg : args) {
			command.add(String.valueOf(arg));
		}
		return new ProcessBuilder(command).redirectErrorStream(true).start();
	}

	/** Waits for a node to end (at most five minutes), checks it succeeded, and returns what it printed. */
	static String finish(Process process) throws IOException, InterruptedException {
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(5, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new AssertionError("node did not end: " + output);
		}
		assertThat(process.exitValue()).as(output).isZero();
		return output;
	}

	/** Starts {@code count} nodes, waits for them all, and returns the values each printed. */
	static List<Map<String, String>> run(int count, Class<?> main, TestDatabase.Connection database,
			java.util.function.IntFunction<Object[]> args) throws IOException, InterruptedException {
		List<Process> processes = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			processes.add(start(main, database, args.apply(i)));
		}
		List<Map<String, String>> values = new ArrayList<>();
		for (Process process : processes) {
			values.add(values(finish(process)));
		}
		return values;
	}

	/** The {@code key=value} lines of a node's output. */
	static Map<String, String> values(String output) {
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

	/** Parks until a wall-clock start time shared by the nodes. */
	static void awaitStart(long startEpochMillis) {
		long wait;
		while ((wait = startEpochMillis - System.currentTimeMillis()) > 0) {
			java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(wait));
		}
	}

}
