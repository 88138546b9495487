package io.github.dblock.testsupport;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.autoconfigure.DbLockSchemaMigration;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialects;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.JdbcDatabaseContainer;
import org.testcontainers.mariadb.MariaDBContainer;
import org.testcontainers.mysql.MySQLContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * The databases the suites run on. A server database is reached through
 * {@code DB_LOCK_TEST_<DB>_URL} (with {@code _USER} and {@code _PASSWORD}), else through
 * Testcontainers where a Docker engine runs, else its tests are skipped with one line
 * saying how to enable them, or fail if {@code DB_LOCK_TEST_REQUIRED} names the database.
 */
public enum TestDatabase {

	/** H2 in its own mode. */
	H2("jdbc:h2:mem:dblock;DB_CLOSE_DELAY=-1"),

	/** H2 in MySQL compatibility mode. */
	H2_MYSQL_MODE("jdbc:h2:mem:dblock_mysql;MODE=MySQL;DATABASE_TO_LOWER=TRUE;DB_CLOSE_DELAY=-1"),

	/** H2 in PostgreSQL compatibility mode. */
	H2_POSTGRESQL_MODE("jdbc:h2:mem:dblock_pg;MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;DB_CLOSE_DELAY=-1"),

	/** MariaDB. */
	MARIADB(null),

	/** MySQL. */
	MYSQL(null),

	/** PostgreSQL. */
	POSTGRESQL(null);

	/** The lock table of every suite. */
	public static final String TABLE = "db_lock";

	/** The start of the name of every table and sequence the suites create on a server. */
	public static final String TABLE_PREFIX = "db_lock";

	private static final Map<TestDatabase, String> skips = new ConcurrentHashMap<>();

	private static final Map<TestDatabase, Connection> connections = new ConcurrentHashMap<>();

	private final String embeddedUrl;

	TestDatabase(String embeddedUrl) {
		this.embeddedUrl = embeddedUrl;
	}

	/**
	 * Connection settings of one database.
	 * @param url its JDBC URL
	 * @param user the user
	 * @param password the password
	 * @param fromEnvironment whether it is a database of the environment's
	 * ({@code DB_LOCK_TEST_<DB>_URL}), whose tables the run drops after its last test
	 */
	public record Connection(String url, String user, String password, boolean fromEnvironment) {
	}

	/**
	 * The database's connection settings, starting a container if needed; skips (or
	 * fails, if required) the calling test when the database cannot be reached.
	 */
	public Connection connection() {
		return connections.computeIfAbsent(this, TestDatabase::connect);
	}

	/**
	 * A new pooled data source on the database, with the lock tables migrated and emptied.
	 * @param poolSize the pool's maximum size
	 */
	public HikariDataSource dataSource(int poolSize) {
		return dataSource(poolSize, null);
	}

	/**
	 * A new pooled data source on the database whose connections wait at most a second
	 * for a row lock, with the lock table migrated and emptied.
	 * @param poolSize the pool's maximum size
	 */
	public HikariDataSource impatientDataSource(int poolSize) {
		return dataSource(poolSize, switch (this) {
			case MARIADB, MYSQL -> "SET SESSION innodb_lock_wait_timeout = 1";
			case POSTGRESQL -> "SET lock_timeout = '1s'";
			default -> "SET LOCK_TIMEOUT 1000";
		});
	}

	private HikariDataSource dataSource(int poolSize, String connectionInitSql) {
		Connection connection = connection();
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(connection.url());
		config.setUsername(connection.user());
		config.setPassword(connection.password());
		config.setMaximumPoolSize(poolSize);
		config.setPoolName("test-" + name().toLowerCase(Locale.ROOT));
		config.setConnectionInitSql(connectionInitSql);
		HikariDataSource dataSource = new HikariDataSource(config);
		new DbLockSchemaMigration(dataSource, dialect(dataSource)).afterPropertiesSet();
		new JdbcTemplate(dataSource).update("DELETE FROM " + TABLE);
		// the read/write modes' tables too: a suite that reaps expects only its own expired rows
		new JdbcTemplate(dataSource).update("DELETE FROM " + TABLE + "_rw");
		new JdbcTemplate(dataSource).update("DELETE FROM " + TABLE + "_rw_intents");
		return dataSource;
	}

	/** The dialect detected for a data source on this database. */
	public SqlDialect dialect(DataSource dataSource) {
		return SqlDialects.detect(dataSource, TABLE);
	}

	/** Whether this is MariaDB or MySQL, whose server counts statements. */
	public boolean countsQuestions() {
		return this == MARIADB || this == MYSQL;
	}

	/**
	 * Drops every table and sequence whose name starts with {@value #TABLE_PREFIX} in the
	 * server databases this run reached through {@code DB_LOCK_TEST_<DB>_URL}: the lock
	 * tables, their history and sequences, and the suites' own tables. Called once, after the
	 * last test ({@link DropTestTables}); containers are thrown away whole.
	 */
	static void dropTablesOfThisRun() {
		for (Map.Entry<TestDatabase, Connection> reached : connections.entrySet()) {
			if (reached.getKey().embeddedUrl == null && reached.getValue().fromEnvironment()) {
				reached.getKey().dropTables(reached.getValue());
			}
		}
	}

	private void dropTables(Connection settings) {
		try (java.sql.Connection connection = DriverManager.getConnection(settings.url(), settings.user(),
				settings.password())) {
			JdbcTemplate jdbc = new JdbcTemplate(new SingleConnectionDataSource(connection, true));
			String like = TABLE_PREFIX.replace("_", "\\_") + "%";
			List<String> dropped = new ArrayList<>();
			if (this == POSTGRESQL) {
				for (String table : jdbc.queryForList("SELECT table_name FROM information_schema.tables"
						+ " WHERE table_schema = current_schema() AND table_name LIKE ?", String.class, like)) {
					jdbc.execute("DROP TABLE IF EXISTS \"" + table + "\" CASCADE");
					dropped.add(table);
				}
				for (String sequence : jdbc.queryForList("SELECT sequence_name FROM information_schema.sequences"
						+ " WHERE sequence_schema = current_schema() AND sequence_name LIKE ?", String.class, like)) {
					jdbc.execute("DROP SEQUENCE IF EXISTS \"" + sequence + "\"");
					dropped.add(sequence);
				}
			}
			else {
				for (Map<String, Object> table : jdbc.queryForList("SELECT table_name AS name, table_type AS type"
						+ " FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?", like)) {
					String kind = "SEQUENCE".equals(table.get("type")) ? "SEQUENCE" : "TABLE";
					jdbc.execute("DROP " + kind + " IF EXISTS `" + table.get("name") + "`");
					dropped.add((String) table.get("name"));
				}
			}
			System.out.println("db-lock tests: dropped the " + dropped.size() + " tables and sequences " + TABLE_PREFIX
					+ "* they left in " + settings.url());
		}
		catch (SQLException | RuntimeException ex) {
			System.out.println("db-lock tests: could not drop the tables " + TABLE_PREFIX + "* in " + settings.url()
					+ ": " + ex);
		}
	}

	private Connection connect() {
		if (this.embeddedUrl != null) {
			return new Connection(this.embeddedUrl, "sa", "", false);
		}
		String skipped = skips.get(this);
		if (skipped != null) {
			Assumptions.abort(skipped);
		}
		String prefix = "DB_LOCK_TEST_" + name() + "_";
		String url = System.getenv(prefix + "URL");
		if (url != null && !url.isBlank()) {
			return new Connection(url, env(prefix + "USER", defaultUser()), env(prefix + "PASSWORD", ""), true);
		}
		if (isDockerAvailable()) {
			JdbcDatabaseContainer<?> container = switch (this) {
				case MARIADB -> new MariaDBContainer("mariadb:11.4");
				case MYSQL -> new MySQLContainer("mysql:8.4");
				default -> new PostgreSQLContainer("postgres:17");
			};
			container.start();
			return new Connection(container.getJdbcUrl(), container.getUsername(), container.getPassword(), false);
		}
		String message = name() + " tests skipped: set " + prefix + "URL (and " + prefix + "USER, " + prefix
				+ "PASSWORD) to a test database, or run a Docker engine for Testcontainers";
		if (required()) {
			Assertions.fail(message + " (required by DB_LOCK_TEST_REQUIRED)");
		}
		// once on the console, where surefire's summary only counts skipped tests
		if (skips.putIfAbsent(this, message) == null) {
			System.out.println("db-lock tests: " + message);
		}
		Assumptions.abort(message);
		throw new IllegalStateException("unreachable");
	}

	private boolean required() {
		String required = System.getenv("DB_LOCK_TEST_REQUIRED");
		return required != null && Arrays.stream(required.split(","))
			.map((name) -> name.trim().toUpperCase(Locale.ROOT))
			.anyMatch(name()::equals);
	}

	private String defaultUser() {
		return (this == POSTGRESQL) ? "postgres" : "root";
	}

	private static String env(String name, String defaultValue) {
		String value = System.getenv(name);
		return (value != null) ? value : defaultValue;
	}

	private static boolean isDockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

}
