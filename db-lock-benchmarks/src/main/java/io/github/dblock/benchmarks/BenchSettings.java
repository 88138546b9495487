package io.github.dblock.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * Where and how long to run, from the environment (inherited by the hot-key worker
 * processes, so they read the same):
 * {@code DB_LOCK_BENCH_URL} (default the local MariaDB's {@code test} database),
 * {@code DB_LOCK_BENCH_USER} ({@code root}), {@code DB_LOCK_BENCH_PASSWORD} (empty),
 * {@code DB_LOCK_BENCH_POOL_SIZE} (16), {@code DB_LOCK_BENCH_WARMUP_SECONDS} (1.5, before
 * a contender's first round and before each hot-key run), {@code DB_LOCK_BENCH_MEASURE_SECONDS}
 * (5, split over the rounds), {@code DB_LOCK_BENCH_ROUNDS} (5).
 *
 * @param url the JDBC URL: MariaDB or MySQL (every scenario and curve), or PostgreSQL (the curves)
 * @param user the user
 * @param password the password
 * @param poolSize the HikariCP pool size of every contender
 * @param warmup the warm-up before each measured run
 * @param measure the measured time of a contender in a scenario
 * @param rounds the rounds the measured time of scenarios 1, 2 and 4 is split into, the
 * contenders taking turns
 */
record BenchSettings(String url, String user, String password, int poolSize, Duration warmup, Duration measure,
		int rounds) {

	/** The local MariaDB's {@code test} database. */
	static final String DEFAULT_URL = "jdbc:mariadb://127.0.0.1:3306/test";

	static BenchSettings fromEnvironment() {
		Map<String, String> env = System.getenv();
		return new BenchSettings(env.getOrDefault("DB_LOCK_BENCH_URL", DEFAULT_URL),
				env.getOrDefault("DB_LOCK_BENCH_USER", "root"), env.getOrDefault("DB_LOCK_BENCH_PASSWORD", ""),
				Integer.parseInt(env.getOrDefault("DB_LOCK_BENCH_POOL_SIZE", "16")),
				seconds(env, "DB_LOCK_BENCH_WARMUP_SECONDS", "1.5"), seconds(env, "DB_LOCK_BENCH_MEASURE_SECONDS", "5"),
				Integer.parseInt(env.getOrDefault("DB_LOCK_BENCH_ROUNDS", "5")));
	}

	/** These settings with another pool size. */
	BenchSettings withPoolSize(int size) {
		return new BenchSettings(this.url, this.user, this.password, size, this.warmup, this.measure, this.rounds);
	}

	/** These settings on another database. */
	BenchSettings withDatabase(String url, String user, String password) {
		return new BenchSettings(url, user, password, this.poolSize, this.warmup, this.measure, this.rounds);
	}

	/** These settings with another measured time. */
	BenchSettings withMeasure(Duration time) {
		return new BenchSettings(this.url, this.user, this.password, this.poolSize, this.warmup, time, this.rounds);
	}

	/** Whether the URL names PostgreSQL (else MariaDB or MySQL). */
	boolean postgresql() {
		return this.url.startsWith("jdbc:postgresql:");
	}

	/** The database's short name, for file names: mariadb, mysql or postgresql. */
	String databaseName() {
		return postgresql() ? "postgresql" : this.url.startsWith("jdbc:mysql:") ? "mysql" : "mariadb";
	}

	private static Duration seconds(Map<String, String> env, String name, String defaultValue) {
		return Duration.ofMillis(Math.round(1000 * Double.parseDouble(env.getOrDefault(name, defaultValue))));
	}

	/**
	 * A pool of {@link #poolSize} connections, all opened before it is returned so that no
	 * connection set-up falls into a measured run.
	 */
	HikariDataSource openPool(String name) throws SQLException {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(this.url);
		config.setUsername(this.user);
		config.setPassword(this.password);
		config.setMaximumPoolSize(this.poolSize);
		config.setMinimumIdle(this.poolSize);
		config.setPoolName(name);
		HikariDataSource pool = new HikariDataSource(config);
		List<Connection> all = new ArrayList<>();
		try {
			while (all.size() < this.poolSize) {
				all.add(pool.getConnection());
			}
		}
		finally {
			for (Connection connection : all) {
				connection.close();
			}
		}
		return pool;
	}

}
